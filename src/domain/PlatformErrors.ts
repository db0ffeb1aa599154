/**
 * `@effect/platform`'s error module, re-exported so that `ErrorClassesOnFirstUse.ts` requires a
 * module of ours: an `import` of the package resolves to its ES build, as every other import of it
 * in the bundle does.
 */
export * from "@effect/platform/Error"
