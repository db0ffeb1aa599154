/**
 * What the fiber runtime uses of `Micro` (running one yielded inside an `Effect`), re-exported on
 * its own so that the command's bundle can initialize `Micro` on first use (see `effect-patches.mjs`):
 * requiring `Micro` itself would give every part an object with a getter for each of its exports.
 */
export { provideContext, runFork } from "effect/Micro"
