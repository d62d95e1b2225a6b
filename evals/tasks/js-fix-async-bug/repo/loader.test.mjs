import { test } from "node:test";
import assert from "node:assert/strict";
import { loadAll } from "./loader.mjs";

const slowDouble = async (value) => {
  await new Promise((resolve) => setTimeout(resolve, 1));
  return value * 2;
};

test("loads every id in order", async () => {
  assert.deepEqual(await loadAll([1, 2, 3], slowDouble), [2, 4, 6]);
});
