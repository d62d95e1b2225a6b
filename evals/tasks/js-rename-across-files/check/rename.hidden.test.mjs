import { test } from "node:test";
import assert from "node:assert/strict";
import * as api from "./lib/api.mjs";
import { cachedUser } from "./lib/cache.mjs";
import { describe } from "./main.mjs";

test("renamed everywhere", () => {
  assert.equal(api.fetchUser(2), "grace");
  assert.equal(api["fetch" + "Usr"], undefined);
  assert.equal(cachedUser(1), "ada");
  assert.equal(describe(1), "ada (cached: ada)");
});
