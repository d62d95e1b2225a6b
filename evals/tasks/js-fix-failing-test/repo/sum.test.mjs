import { test } from "node:test";
import assert from "node:assert/strict";
import { sum } from "./sum.mjs";

test("adds every element", () => {
  assert.equal(sum([1, 2, 3]), 6);
});

test("empty list", () => {
  assert.equal(sum([]), 0);
});
