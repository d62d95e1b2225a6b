import { fetchUsr } from "./lib/api.mjs";
import { cachedUser } from "./lib/cache.mjs";

export function describe(id) {
  return `${fetchUsr(id)} (cached: ${cachedUser(id)})`;
}
