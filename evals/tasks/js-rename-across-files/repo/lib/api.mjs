const PEOPLE = new Map([
  [1, "ada"],
  [2, "grace"],
]);

export function fetchUsr(id) {
  return PEOPLE.get(id) ?? null;
}
