/**
 * A user's own code built on claude-peers: a tiny mail router. It addresses a session by name only
 * when that name leads to exactly one live session with an inbox, and it can wait for a session to
 * appear. `router.test.ts` tests it against the in-memory world.
 */
import { Registry, Watch } from "claude-peers"
import { Effect, Option, Stream } from "effect"

export type Route =
  | { readonly _tag: "Deliver"; readonly address: string; readonly pid: number }
  | { readonly _tag: "Hold"; readonly why: string }

/** Where a message for `name` goes, or why it must be held. */
export const route = (name: string) =>
  Effect.flatMap(Registry.Registry, (registry) => registry.resolve({ name })).pipe(
    Effect.map((session): Route => ({ _tag: "Deliver", address: session.address ?? "", pid: session.pid })),
    Effect.catchTags({
      NotLive: (e) => Effect.succeed<Route>({ _tag: "Hold", why: e.message }),
      IdentityMismatch: (e) => Effect.succeed<Route>({ _tag: "Hold", why: e.message }),
      NotAddressable: (e) => Effect.succeed<Route>({ _tag: "Hold", why: e.message })
    })
  )

/** The pid of the first live session named `name`, once it appears (or at once if it runs). */
export const waitForSession = (name: string) =>
  Stream.unwrap(Effect.map(Watch.Watch, (watch) => watch.sessions())).pipe(
    Stream.filterMap((event) => (event._tag === "appeared" && event.session.name === name ? Option.some(event.session.pid) : Option.none())),
    Stream.runHead,
    Effect.flatMap(Effect.orDie)
  )
