/**
 * `watch` over several Claude homes: one `Watch` per home (each exactly the single-home watch, over
 * its own registry), their streams merged, every event's sessions labelled with their `home`. With
 * `ClaudeHomes.homes` asked again every interval, a home that appears later (a Claude Code process
 * started under a new `CLAUDE_CONFIG_DIR`, a named link re-pointed to another home) is watched from
 * then on: its sessions appear within the interval. With `all`, a home once watched is watched
 * until the stream ends, so none of its sessions is lost when the process that revealed it exits;
 * without it, a home no longer named (its link re-pointed) is watched no more, and its sessions are
 * gone (`removed`), as a single home's are when its link is re-pointed.
 */
import type { PlatformError } from "@effect/platform/Error"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type { Session } from "../domain/Session.js"
import { gone, type SessionEvent } from "../domain/SessionEvent.js"
import type { RegistryEntry } from "../domain/Verdict.js"
import * as ClaudeHome from "./ClaudeHome.js"
import { ClaudeHomes } from "./ClaudeHomes.js"
import type { Files } from "./Files.js"
import type { ProcessProbe } from "./ProcessProbe.js"
import * as Registry from "./Registry.js"
import * as Timing from "./Timing.js"
import * as Watch from "./Watch.js"

const labelled = (home: string, several: boolean) => (event: SessionEvent): SessionEvent => {
  if (!several) return event
  const label = (session: Session): Session => ({ ...session, home })
  switch (event._tag) {
    case "appeared":
      return { ...event, session: label(event.session) }
    case "changed":
      return { ...event, session: label(event.session), previous: label(event.previous) }
    case "gone":
      return { ...event, session: label(event.session) }
  }
}

/**
 * The watch's first read is that of every home it starts with, together: each of those homes'
 * watches hands its own first read to the one returned for its root, and `onFirstRead` is called
 * once, when the last of them has (by the caller, with nothing, when there is none). A caller that
 * took one home's entries for the watch's would find its session missing from them. Homes found
 * later have no part in it.
 */
const firstReadOf = (
  initial: ReadonlyArray<ClaudeHome.ClaudeHome>,
  onFirstRead: Watch.WatchOptions["onFirstRead"]
): ReadonlyMap<string, Watch.WatchOptions["onFirstRead"]> => {
  if (onFirstRead === undefined) return new Map()
  const read: Array<ReadonlyArray<RegistryEntry>> = []
  const each = (entries: ReadonlyArray<RegistryEntry>) =>
    Effect.suspend(() => {
      read.push(entries)
      return read.length === initial.length ? onFirstRead(read.flat()) : Effect.void
    })
  return new Map(initial.map((home) => [home.root, each]))
}

export const make = Effect.gen(function*() {
  const homes = yield* ClaudeHomes
  const context = yield* Effect.context<Files | ProcessProbe | Timing.Timing>()
  const timings = yield* Timing.Timing

  /** The single-home watch of one home, over a registry of its own; a name is no address over several homes. */
  const watchOf = (home: ClaudeHome.ClaudeHome, options: Watch.WatchOptions): Stream.Stream<SessionEvent, PlatformError> =>
    Stream.unwrap(
      Watch.make.pipe(
        Effect.map((watch) => watch.sessions(options)),
        Effect.provideServiceEffect(Registry.Registry, Registry.make),
        Effect.provideService(ClaudeHome.ClaudeHome, homes.several ? { ...home, sendersHome: false } : home),
        Effect.provide(context)
      )
    ).pipe(Stream.map(labelled(home.root, homes.several)))

  /**
   * A home's watch until `left` completes (the home is no longer one of the homes), then a `gone`
   * (`removed`) for each session it last reported live: they are no longer in any home watched.
   */
  const watchUntilLeft = (home: ClaudeHome.ClaudeHome, watch: Watched, options: Watch.WatchOptions) =>
    Stream.suspend(() => {
      const live = new Map<string, Session>()
      return watchOf(home, options).pipe(
        Stream.tap((event) => Effect.sync(() => void (event._tag === "gone" ? live.delete(event.session.file) : live.set(event.session.file, event.session)))),
        Stream.interruptWhen(Deferred.await(watch.left)),
        Stream.concat(Stream.suspend(() => Stream.fromIterable([...live.values()].sort((a, b) => a.pid - b.pid).map((session) => gone(session, "removed"))))),
        Stream.ensuring(Deferred.succeed(watch.ended, undefined))
      )
    })

  /** A home's watch: `left` ends it, `ended` is done once its last event is out. */
  interface Watched {
    readonly left: Deferred.Deferred<void>
    readonly ended: Deferred.Deferred<void>
  }

  const sessions = (options: Watch.WatchOptions = {}): Stream.Stream<SessionEvent, PlatformError> => {
    const interval = options.interval === undefined ? timings.watchInterval : Duration.decode(options.interval)
    /** The homes watched, by root. */
    const watched = new Map<string, Watched>()
    const newHomes = Effect.gen(function*() {
      const now = yield* homes.homes
      // Without `all`, a home no longer answered (a named link re-pointed elsewhere) is watched no
      // more; its sessions are told gone before any home found now is watched, so that a session
      // that moves with the link is gone from the old home before it appears in the new one.
      if (homes.all !== true) {
        const roots = new Set(now.map((home) => home.root))
        const leaving = [...watched].filter(([root]) => !roots.has(root))
        for (const [root, watch] of leaving) {
          watched.delete(root)
          yield* Deferred.succeed(watch.left, undefined)
        }
        for (const [, watch] of leaving) yield* Deferred.await(watch.ended)
      }
      const fresh: Array<readonly [ClaudeHome.ClaudeHome, Watched]> = []
      for (const home of now) {
        if (watched.has(home.root)) continue
        const watch: Watched = { left: yield* Deferred.make<void>(), ended: yield* Deferred.make<void>() }
        watched.set(home.root, watch)
        fresh.push([home, watch])
      }
      return fresh
    })
    const later = Stream.repeatEffect(Effect.zipRight(Timing.sleep(interval, "the next look for Claude homes"), newHomes))
    return Stream.unwrap(Effect.gen(function*() {
      const initial = yield* newHomes
      if (initial.length === 0 && options.onFirstRead !== undefined) yield* options.onFirstRead([])
      const onFirstRead = firstReadOf(initial.map(([home]) => home), options.onFirstRead)
      const found = Stream.concat(Stream.succeed(initial), later).pipe(Stream.flattenIterables)
      return found.pipe(
        Stream.flatMap(([home, watch]) => watchUntilLeft(home, watch, { ...options, onFirstRead: onFirstRead.get(home.root) }), {
          concurrency: "unbounded"
        })
      )
    })).pipe(Stream.withSpan("WatchHomes.sessions"))
  }

  return Watch.Watch.of({ sessions })
})

/** `Watch` over the homes `ClaudeHomes` names. */
export const layer: Layer.Layer<Watch.Watch, never, ClaudeHomes | Files | ProcessProbe | Timing.Timing> = Layer.effect(Watch.Watch, make)
