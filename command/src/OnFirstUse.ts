/**
 * Stand-ins the command's build puts in place of modules a run that succeeds never needs (the
 * build's replacement table, `onFirstUse` in `command/build.mjs`). The real module is loaded
 * through `require`, which esbuild makes a synchronous call of the module's lazy initializer: the
 * first use of a stand-in builds the real value, and nothing before it does.
 */

/**
 * Tells the loader (`bin/claude-peers.js`) that this run loaded such a module: a code cache it
 * writes holds what runs that succeed should not have to load, so the loader keeps such a cache only
 * until a run that succeeds comes along.
 */
const coldPath = Symbol.for("claude-peers/cold-path")

/** The module `load` returns, loaded once, on the first call. */
export const loadOnFirstUse = <M>(load: () => M): () => M => {
  let module: M | undefined
  return () => {
    if (module === undefined) {
      ;(globalThis as Record<symbol, unknown>)[coldPath] = true
      module = load()
    }
    return module
  }
}

/**
 * A stand-in for the class or function `real` returns: `new`, a call, `instanceof`, its statics and
 * any use of it as a schema (which reads its properties) act on the real one, built on first use.
 * The target is a plain function so that the stand-in can be called and constructed; what it
 * constructs is the real class's instance (a subclass's, when one extends the stand-in).
 */

export const onFirstUse = <A extends Function>(real: () => A): A => {
  const standIn: A = new Proxy(function() {} as unknown as A, {
    apply: (_, self, args) => Reflect.apply(real(), self, args),
    construct: (_, args, newTarget) => Reflect.construct(real(), args, newTarget === standIn ? real() : newTarget),
    // A static getter runs on whoever asked: a subclass of the stand-in gets its own schema, as a
    // subclass of the real class does.
    get: (_, key, receiver) => Reflect.get(real(), key, receiver === standIn ? real() : receiver),
    has: (_, key) => Reflect.has(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real())
  })
  return standIn
}
