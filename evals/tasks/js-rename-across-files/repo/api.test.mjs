import { test } from "node:test";
import assert from "node:assert/strict";
import { fetchUsr } from "./lib/api.mjs";
import { describe } from "./main.mjs";

test("lookup", () => {
  assert.equal(fetchUsr(1), "ada");
  assert.equal(describe(2), "grace (cached: grace)");
});
