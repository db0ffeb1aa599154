/**
 * A fact about another process that this machine may or may not be allowed to read: what was read,
 * or why nothing was. The reason travels with the gap all the way to the answer, so that a
 * `partial` policy says what could not be seen instead of filling it in.
 */
export type Observed<A> =
  | { readonly _tag: "Read"; readonly value: A }
  | { readonly _tag: "Unreadable"; readonly reason: string }

export const read = <A>(value: A): Observed<A> => ({ _tag: "Read", value })

export const unreadable = <A = never>(reason: string): Observed<A> => ({ _tag: "Unreadable", reason })

/** The value, or null when it could not be read. */
export const valueOf = <A>(observed: Observed<A>): A | null => (observed._tag === "Read" ? observed.value : null)
