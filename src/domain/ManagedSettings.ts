/**
 * Where an administrator's settings files live, and which of them Claude Code 2.1.332 reads.
 *
 * The managed source is one document built from several files: `managed-settings.json`, then the
 * drop-ins of `managed-settings.d/` in name order, each merged over the ones before, so for a
 * single value such as `crossSessionInbound` the last file that holds it wins. A drop-in counts
 * when its name ends in `.json` and does not start with `.` (editor back-ups and hidden files do
 * not), and it is a file or a symbolic link. Names are ordered by UTF-16 code units, as
 * JavaScript's default sort does, so `10-a.json` comes before `9-b.json`.
 *
 * These files are only what this machine shows. Claude Code can also receive managed settings from
 * Anthropic's servers or from the operating system's policy store, and those can take precedence
 * over the files; nobody outside the process can see them, so every answer names them as unseen.
 */

export type Platform = "linux" | "darwin" | "win32" | (string & {})

/** The managed settings directory of a platform; every other Unix uses Linux's. */
export const managedDirectoryOf = (platform: Platform): string =>
  platform === "darwin"
    ? "/Library/Application Support/ClaudeCode"
    : platform === "win32"
    ? "C:\\Program Files\\ClaudeCode"
    : "/etc/claude-code"

export const managedFileName = "managed-settings.json"
export const dropInDirectoryName = "managed-settings.d"

/** A directory entry as a listing reports it, without following links. */
export interface DropInEntry {
  readonly name: string
  readonly type: "File" | "SymbolicLink" | "Directory" | "Other"
}

/** The drop-ins Claude Code reads, in the order it merges them. */
export const dropInNames = (entries: ReadonlyArray<DropInEntry>): ReadonlyArray<string> =>
  entries
    .filter((entry) => (entry.type === "File" || entry.type === "SymbolicLink") && isDropInName(entry.name))
    .map((entry) => entry.name)
    .sort()

export const isDropInName = (name: string): boolean => name.endsWith(".json") && !name.startsWith(".")

/**
 * The managed files to read, in merge order: the base file, then each drop-in. The caller reads
 * each and reports one `policySettings` reading per file in this order; `decidePolicy` merges them.
 */
export const managedFilePaths = (
  directory: string,
  dropIns: ReadonlyArray<string>,
  platform: Platform
): ReadonlyArray<string> => {
  const separator = platform === "win32" ? "\\" : "/"
  const join = (...parts: ReadonlyArray<string>) => [directory.replace(/[\\/]+$/, ""), ...parts].join(separator)
  return [join(managedFileName), ...dropIns.map((name) => join(dropInDirectoryName, name))]
}
