export async function loadAll(ids, load) {
  const results = [];
  for (const id of ids) {
    results.push(load(id));
  }
  return results;
}
