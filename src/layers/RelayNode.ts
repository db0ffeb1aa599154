/**
 * `Relay` on the real machine: the user's own Claude Code, run as `claude -p` against the model
 * endpoint claude-peers serves for that one run (`RelayEndpoint`), in a working directory only this
 * user can enter (`relayWorkingDirectory`), with the receiver's Claude home, and with nothing but `ToolSearch` and `SendMessage`
 * (see `RelayLaunch` for each flag).
 *
 * The relay never outlives the send. Its process is acquired with its release: whatever ends the
 * send (a receipt, a failure, the timeout, an interruption) it gets SIGTERM first, because Claude
 * Code removes its own registry record on SIGTERM and leaves it behind on SIGKILL, then SIGKILL
 * after a grace, and the send returns only once its exit has been seen (Node reaps it then).
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DeliveryFailed, type RelayRun } from "../domain/Errors.js"
import { relayArguments, relayEnvironment, relayPrompt } from "../domain/RelayLaunch.js"
import { failWhenCancelled, Relay, type RelayReceipt, type RelayRequest } from "../services/Relay.js"
import * as RelayEndpoint from "./RelayEndpoint.js"

export interface RelayNodeOptions {
  /** The Claude Code executable; when absent, `$CLAUDE_PEERS_CLAUDE_BIN`, then `claude` on `PATH`. */
  readonly claudeBinary?: string | undefined
  /** The environment the relay inherits and the binary is looked up in (default: this process's). */
  readonly environment?: Readonly<Record<string, string | undefined>> | undefined
  /** Between SIGTERM and SIGKILL (default 3 s). */
  readonly killGrace?: Duration.DurationInput | undefined
  /** How long a relay that has given its receipt may take to exit by itself before SIGTERM (default 2 s). */
  readonly exitGrace?: Duration.DurationInput | undefined
  /** `ToolSearch` rounds after the send that wait for a hold or refusal notice (default 4). */
  readonly noticeRounds?: number | undefined
  /** The same where the request expects a notice (`noticeExpected`; default three times `noticeRounds`, never fewer). */
  readonly expectedNoticeRounds?: number | undefined
  /** How long each of those rounds is held back (default 250 ms). */
  readonly noticeRoundDelay?: Duration.DurationInput | undefined
  /** Where the relay's working directory is made (default: the system's temporary directory). */
  readonly workingDirectoryRoot?: string | undefined
}

type Failure = Pick<DeliveryFailed, "cause" | "detail">

const isExecutableFile = (file: string): boolean => {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/** `name` in the directories of `PATH`, as a shell finds it; a name with a slash is taken as a path. */
const lookUp = (name: string, pathVariable: string | undefined): string | null => {
  if (name.includes("/")) return isExecutableFile(name) ? path.resolve(name) : null
  for (const directory of (pathVariable ?? "").split(path.delimiter)) {
    if (directory === "") continue
    const candidate = path.join(directory, name)
    if (isExecutableFile(candidate)) return candidate
  }
  return null
}

const cutText = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

/** The executable to relay with, or why there is none (naming what was looked for, and where). */
export const findClaudeBinary = (
  options: Pick<RelayNodeOptions, "claudeBinary" | "environment">
): Either.Either<string, Failure> => {
  const env = options.environment ?? process.env
  const fromEnv = env.CLAUDE_PEERS_CLAUDE_BIN
  const [name, origin] = options.claudeBinary !== undefined
    ? [options.claudeBinary, "the claudeBinary option"]
    : fromEnv !== undefined && fromEnv !== ""
    ? [fromEnv, "$CLAUDE_PEERS_CLAUDE_BIN"]
    : ["claude", "the default"]
  const found = lookUp(name, env.PATH)
  if (found !== null) return Either.right(found)
  const where = name.includes("/")
    ? "which is not an executable file"
    : `which is not an executable file in any directory of PATH (${cutText(env.PATH ?? "unset", 200)})`
  return Either.left({
    cause: "relay_not_found",
    detail: `no Claude Code to relay with: ${origin} names ${
      JSON.stringify(cutText(name, 200))
    }, ${where}. Install Claude Code, or name it with claudeBinary or $CLAUDE_PEERS_CLAUDE_BIN`
  })
}

const controls = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/** The last non-empty line of what the relay wrote to stderr, terminal-safe and cut short. */
export const lastLine = (text: string): string | null => {
  const line = text.split(/\r?\n/).map((part) => part.trim()).filter((part) => part !== "").at(-1)
  if (line === undefined) return null
  return cutText(line.replace(controls, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`), 300)
}

interface Exit {
  readonly code: number | null
  readonly signal: string | null
}

interface Child {
  readonly process: ChildProcess.ChildProcess
  readonly exited: Deferred.Deferred<Exit>
  readonly stderr: () => string
  readonly exit: () => Exit | null
}

/** The relay process, started in `cwd`; its release stops it and waits for its exit. */
const startChild = (
  executable: string,
  cwd: string,
  env: Record<string, string>,
  killGrace: Duration.Duration
) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const exited = yield* Deferred.make<Exit>()
      // Imported where it is used: it brings `net`, `dgram` and the stream machinery.
      const { spawn } = yield* Effect.promise(() => import("node:child_process"))
      const child = yield* Effect.async<ChildProcess.ChildProcess, Failure>((resume) => {
        const process = spawn(executable, relayArguments(), { cwd, env, stdio: ["ignore", "ignore", "pipe"] })
        process.once("spawn", () => resume(Effect.succeed(process)))
        process.once("error", (error) =>
          resume(Effect.fail({ cause: "relay_not_found", detail: `${JSON.stringify(cutText(executable, 200))} could not be started: ${error.message}` })))
      })
      let stderr = ""
      let exit: Exit | null = child.exitCode === null && child.signalCode === null ? null : { code: child.exitCode, signal: child.signalCode }
      child.stderr?.setEncoding("utf8")
      child.stderr?.on("data", (chunk: string) => {
        stderr = (stderr + chunk).slice(-8192)
      })
      const record = (code: number | null, signal: NodeJS.Signals | null) => {
        exit = { code, signal }
        Deferred.unsafeDone(exited, Effect.succeed(exit))
      }
      if (exit !== null) {
        Deferred.unsafeDone(exited, Effect.succeed(exit))
      } else child.once("exit", record)
      return {
        process: child,
        exited,
        stderr: () =>
          stderr,
        exit: () =>
          exit
      } satisfies Child
    }),
    (child) => stop(child, killGrace)
  )

/** SIGTERM, then SIGKILL after `grace`; ends once the exit has been seen. Does nothing to an exited relay. */
const stop = (child: Child, grace: Duration.Duration): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (child.exit() !== null) return
    child.process.kill("SIGTERM")
    const exited = yield* Effect.timeout(Deferred.await(child.exited), grace).pipe(Effect.option)
    if (exited._tag === "Some") return
    child.process.kill("SIGKILL")
    yield* Deferred.await(child.exited)
  })

/**
 * Whether a directory of a fixed name under `root` stays the one checked: nobody else may rename it
 * away and put another in its place, which a root of this user's, or a sticky one, guarantees.
 */
const sharedRootAllows = (root: string, uid: number): boolean => {
  const info = fs.statSync(root, { throwIfNoEntry: false })
  return info !== undefined && (info.uid === uid || (info.mode & 0o1000) !== 0 || (info.mode & 0o022) === 0)
}

/** This user's own directory, not a link, mode 0700 exactly, and empty. */
const usableShared = (directory: string, uid: number): boolean => {
  try {
    const info = fs.lstatSync(directory)
    return info.isDirectory() && info.uid === uid && (info.mode & 0o777) === 0o700 && fs.readdirSync(directory).length === 0
  } catch {
    return false
  }
}

/**
 * The relay's working directory. Claude Code keeps a project entry in the receiver's home for every
 * directory it runs in (`projects/<that path>/`), so every relay runs in one directory per user,
 * `<tmp>/claude-peers-relay-<uid>`, and the home gains one entry, not one per send. Claude Code reads a
 * project's `.claude/` there, so it is used only while it is this user's own directory (not a link),
 * mode 0700 and empty, under a root where nobody else can swap it; otherwise a fresh temporary
 * directory serves that send, and is removed after it.
 */
export const relayWorkingDirectory = (root: string = os.tmpdir()) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const uid = process.getuid?.()
        if (uid !== undefined && sharedRootAllows(root, uid)) {
          const shared = path.join(root, `claude-peers-relay-${uid}`)
          try {
            fs.mkdirSync(shared, { mode: 0o700 })
          } catch {
            // There already, or not to be made: the checks below decide.
          }
          if (usableShared(shared, uid)) return { directory: shared, temporary: false }
        }
        return { directory: fs.mkdtempSync(path.join(root, "claude-peers-relay-")), temporary: true }
      },
      catch: (error): Failure => ({ cause: "relay_failed", detail: `no private working directory for the relay: ${(error as Error).message}` })
    }),
    ({ directory, temporary }) => temporary ? Effect.sync(() => fs.rmSync(directory, { recursive: true, force: true })) : Effect.void
  )

export const make = (options: RelayNodeOptions = {}): Relay => {
  const killGrace = Duration.decode(options.killGrace ?? Duration.seconds(3))
  const exitGrace = Duration.decode(options.exitGrace ?? Duration.seconds(2))

  const rounds = options.noticeRounds ?? 4

  const send = (request: RelayRequest): Effect.Effect<RelayReceipt, DeliveryFailed> =>
    Effect.scoped(Effect.gen(function*() {
      let executable = options.claudeBinary ?? "claude"
      let child: Child | null = null
      let endpoint: RelayEndpoint.RelayEndpoint | null = null
      /** How far the send got, for a failure's detail: a relay told to call `SendMessage` may have delivered. */
      const progress = Effect.suspend((): Effect.Effect<RelayEndpoint.SendProgress> =>
        endpoint === null ? Effect.succeed({ issued: false, answered: false, result: null }) : endpoint.send
      )
      const runOf = (): RelayRun | null =>
        child === null ? null : {
          executable,
          exitCode: child.exit()?.code ?? null,
          signal: child.exit()?.signal ?? null,
          lastStderrLine: lastLine(child.stderr())
        }
      const attempt = Effect.gen(function*() {
        executable = yield* findClaudeBinary(options)
        const served = yield* RelayEndpoint.start({
          address: request.address,
          message: request.message,
          prompt: relayPrompt,
          // Claude Code 2.1.332's captured hold and refusal notices reached the relay only in the
          // second round after SendMessage's result: a receiver slower to judge the message would
          // read as delivered, so a notice the prediction expects gets more rounds.
          noticeRounds: request.noticeExpected === true ? Math.max(rounds, options.expectedNoticeRounds ?? 3 * rounds) : rounds,
          noticeRoundDelay: options.noticeRoundDelay
        })
        endpoint = served
        const { directory: cwd } = yield* relayWorkingDirectory(options.workingDirectoryRoot)
        const env = relayEnvironment({
          base: options.environment ?? process.env,
          claudeHome: request.claudeHome,
          userHome: os.homedir(),
          baseUrl: served.url,
          apiKey: served.key
        })
        child = yield* startChild(executable, cwd, env, killGrace)
        const started = child
        const exitedFirst = Effect.flatMap(Deferred.await(started.exited), (exit) =>
          Effect.flatMap(progress, ({ answered }): Effect.Effect<never, Failure> =>
            Effect.fail({
              cause: "relay_failed",
              detail: `the relay exited (${exit.signal ?? `code ${exit.code}`}) ${
                answered ? "before a hold or refusal could be told" : "before SendMessage's result reached the endpoint"
              }`
            })))
        const cancelled = failWhenCancelled(
          request.cancel,
          (): Failure => ({ cause: "interrupted", detail: "the send was interrupted before its outcome was known; the relay was stopped" })
        )
        const receipt = yield* Effect.raceFirst(served.outcome, exitedFirst).pipe(
          Effect.raceFirst(cancelled),
          Effect.timeoutFail({
            duration: request.timeout,
            onTimeout: (): Failure => ({ cause: "timed_out", detail: `no receipt within ${Duration.format(request.timeout)}; the relay was stopped` })
          })
        )
        // A relay that has given its receipt ends its turn and exits; it is stopped only if it lingers.
        yield* Effect.timeout(Deferred.await(started.exited), exitGrace).pipe(Effect.ignore)
        return receipt
      })
      const outcome = yield* Effect.either(attempt)
      if (child !== null) {
        yield* stop(child, killGrace)
      }
      if (Either.isRight(outcome)) {
        return outcome.right
      }
      const { answered, issued, result } = yield* progress
      // A relay told to call SendMessage may have run it without its result reaching the endpoint.
      const unknown = issued && !answered
        ? "; the relay had been told to call SendMessage, so the message may be in the session's inbox"
        : ""
      return yield* new DeliveryFailed({ ...outcome.left, detail: outcome.left.detail + unknown, session: null, relay: runOf(), sendResult: result })
    }))

  // The relay runs in the default permission mode (RelayLaunch), which is of the prompting class.
  return { senderClass: "prompting", send }
}

/** `Relay` through the user's Claude Code. */
export const layer = (options: RelayNodeOptions = {}): Layer.Layer<Relay> => Layer.sync(Relay, () => make(options))
