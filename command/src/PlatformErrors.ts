/**
 * `@effect/platform`'s error module, re-exported so that `PlatformErrorsOnFirstUse.ts` requires a
 * module of ours: an `import` of the package resolves to its ES build, as every other import of it
 * in the bundle does, where a `require` of it would resolve to its CommonJS build.
 */
export * from "@effect/platform/Error"
