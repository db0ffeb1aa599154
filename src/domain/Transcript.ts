/**
 * Where Claude Code keeps a session's transcript: `<home>/projects/<project>/<sessionId>.jsonl`,
 * `<project>` being the session's working directory made a directory name. The rule is Claude Code
 * 2.1.332's: every UTF-16 code unit outside `[a-zA-Z0-9]` becomes `-` (so a character outside the
 * BMP becomes two); a name longer than 200 is cut to 200 and followed by `-` and a hash of the whole
 * directory in base 36. Older releases hashed long names otherwise, so a long name is also looked
 * for by its 200-character prefix, as Claude Code itself looks for it.
 */
import * as path from "node:path"

/** Claude Code's cut for project directory names. */
export const projectNameLimit = 200

/** The 32-bit string hash Claude Code's long names end with (`h = 31·h + unit`, wrapped). */
export const stringHash = (text: string): number => {
  let hash = 0
  for (let i = 0; i < text.length; i++) hash = (hash << 5) - hash + text.charCodeAt(i) | 0
  return hash
}

/** Every code unit outside `[a-zA-Z0-9]` as `-`: the part both spellings of a long name share. */
export const sanitizedDirectory = (cwd: string): string => cwd.replace(/[^a-zA-Z0-9]/g, "-")

/** The working directory as Claude Code names its project directory. */
export const projectDirectoryName = (cwd: string): string => {
  const name = sanitizedDirectory(cwd)
  return name.length <= projectNameLimit ? name : `${name.slice(0, projectNameLimit)}-${Math.abs(stringHash(cwd)).toString(36)}`
}

/** `<home>/projects` */
export const projectsDirectory = (home: string): string => path.join(home, "projects")

/** The transcript's path as Claude Code 2.1.332 names it. */
export const transcriptPathOf = (home: string, cwd: string, sessionId: string): string =>
  path.join(projectsDirectory(home), projectDirectoryName(cwd), `${sessionId}.jsonl`)

/** Whether Claude Code cuts the directory's name (and another release may have hashed it otherwise). */
export const isLong = (cwd: string): boolean => sanitizedDirectory(cwd).length > projectNameLimit

/**
 * A project directory that may hold a long directory's transcript under another release's hash:
 * the same 200-character prefix, then `-`.
 */
export const mayBeLongProject = (cwd: string, entry: string): boolean => {
  const name = sanitizedDirectory(cwd)
  return name.length > projectNameLimit && entry.startsWith(`${name.slice(0, projectNameLimit)}-`)
}

/** A session id that can be a file name (Claude Code's are UUIDs): never a path. */
export const isFileNameSafe = (sessionId: string): boolean => sessionId.length > 0 && sessionId !== "." && sessionId !== ".." && !/[/\\\0]/.test(sessionId)
