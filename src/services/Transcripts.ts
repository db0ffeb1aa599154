/**
 * A live session's transcript, found through the file port: the file Claude Code names for it
 * (`Transcript.ts`), or, for a working directory whose name Claude Code cuts, any project directory
 * with the same prefix that holds `<sessionId>.jsonl`. Only a regular file counts; nothing is read
 * but its metadata.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as path from "node:path"
import type { Session } from "../domain/Session.js"
import { isFileNameSafe, isLong, mayBeLongProject, projectsDirectory, transcriptPathOf } from "../domain/Transcript.js"
import type { Files } from "./Files.js"
import { keepProvenStart } from "./RegistryScan.js"

export interface TranscriptFound {
  readonly transcriptPath: string | null
  readonly transcriptUpdatedAtMs: number | null
}

const none: TranscriptFound = { transcriptPath: null, transcriptUpdatedAtMs: null }

/**
 * The file at `file` when it is a regular file, with its last write. Its directory is listed first
 * (`readDirectoryIfExists`): a transcript not written yet is an answer, not a failure to build.
 */
const regular = (files: Files, file: string): Effect.Effect<Option.Option<TranscriptFound>> =>
  Effect.gen(function*() {
    const listing = yield* Effect.orElseSucceed(files.readDirectoryIfExists(path.dirname(file)), () => Option.none())
    const name = path.basename(file)
    if (Option.isNone(listing) || !listing.value.some((entry) => entry.name === name)) return Option.none()
    return yield* Effect.match(files.stat(file), {
      onFailure: () => Option.none(),
      onSuccess: (info) => info.type === "File" ? Option.some({ transcriptPath: file, transcriptUpdatedAtMs: info.modifiedAtMs }) : Option.none()
    })
  })

/** The transcript of a session registered in `home`; none when the session's directory is unknown or no file is there. */
export const transcriptOf = (files: Files, home: string, session: Pick<Session, "cwd" | "sessionId">): Effect.Effect<TranscriptFound> =>
  Effect.gen(function*() {
    const { cwd, sessionId } = session
    if (cwd === null || !isFileNameSafe(sessionId)) return none
    const named = yield* regular(files, transcriptPathOf(home, cwd, sessionId))
    if (Option.isSome(named)) return named.value
    if (!isLong(cwd)) return none
    const projects = projectsDirectory(home)
    const listing = yield* Effect.orElseSucceed(files.readDirectoryIfExists(projects), () => Option.none())
    for (const entry of Option.getOrElse(listing, () => [])) {
      if (!mayBeLongProject(cwd, entry.name)) continue
      const found = yield* regular(files, path.join(projects, entry.name, `${sessionId}.jsonl`))
      if (Option.isSome(found)) return found.value
    }
    return none
  })

/** The session with its transcript's fields. */
export const withTranscript = (files: Files, home: string) => (session: Session): Effect.Effect<Session> =>
  Effect.map(transcriptOf(files, home, session), (found) => keepProvenStart(session, { ...session, ...found }))
