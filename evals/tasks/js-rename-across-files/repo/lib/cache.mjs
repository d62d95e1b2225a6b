import { fetchUsr } from "./api.mjs";

const cache = new Map();

export function cachedUser(id) {
  if (!cache.has(id)) {
    cache.set(id, fetchUsr(id));
  }
  return cache.get(id);
}
