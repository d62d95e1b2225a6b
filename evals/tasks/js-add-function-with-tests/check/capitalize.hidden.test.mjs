import { test } from "node:test";
import assert from "node:assert/strict";
import { capitalize } from "./strings.mjs";

test("capitalize every word", () => {
  assert.equal(capitalize("hello wORLD"), "Hello World");
  assert.equal(capitalize("a b"), "A B");
  assert.equal(capitalize(""), "");
});
