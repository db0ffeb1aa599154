/**
 * The real Claude Code, pinned, installed into a cache inside this repository (git-ignored), and the
 * throw-away home it runs in: a fake API key that it has been told to accept (its API is the check's
 * local stand-in), onboarding done and the work directories trusted, so that it goes straight to its
 * prompt.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export const claudeCodeVersion = "2.1.332"

/** The npm package holding the native binary for this machine. */
const nativePackage = () => {
  const musl = process.platform === "linux" && !process.report?.getReport?.().header?.glibcVersionRuntime
  return `@anthropic-ai/claude-code-${process.platform}-${process.arch}${musl ? "-musl" : ""}`
}

const installedVersion = (binary, env) => {
  const result = spawnSync(binary, ["--version"], { env, encoding: "utf8", timeout: 60_000 })
  return result.status === 0 ? result.stdout.trim() : null
}

/**
 * The path of the native binary of Claude Code `claudeCodeVersion`, installed into `cacheDirectory`
 * when it is not there yet. Under Node 20 an unpinned install silently picks an old release (the
 * package asks for Node 22), hence the exact version and `--engine-strict=false`.
 */
export const ensureClaudeCode = ({ cacheDirectory, env, log }) => {
  const binary = join(cacheDirectory, "node_modules", nativePackage(), "claude")
  const current = existsSync(binary) ? installedVersion(binary, env) : null
  if (current !== null && current.startsWith(claudeCodeVersion)) return binary
  log(
    current === null
      ? `installing Claude Code ${claudeCodeVersion} into ${cacheDirectory} (about 400 MB, once)`
      : `replacing Claude Code ${current} in ${cacheDirectory} with ${claudeCodeVersion}`
  )
  mkdirSync(cacheDirectory, { recursive: true })
  // Its own package.json, so that npm installs here and never into the repository's package.json.
  writeFileSync(
    join(cacheDirectory, "package.json"),
    `${
      JSON.stringify(
        {
          name: "claude-peers-check-claude-cache",
          private: true,
          description: "Claude Code for `npm run check:claude`; not part of claude-peers"
        },
        null,
        2
      )
    }\n`
  )
  const npm = process.platform === "win32" ? "npm.cmd" : "npm"
  const install = spawnSync(
    npm,
    ["install", "--engine-strict=false", "--no-audit", "--no-fund", `@anthropic-ai/claude-code@${claudeCodeVersion}`],
    { cwd: cacheDirectory, stdio: ["ignore", 2, 2] }
  )
  if (install.status !== 0) throw new Error(`npm install of Claude Code ${claudeCodeVersion} failed (exit ${install.status})`)
  const installed = existsSync(binary) ? installedVersion(binary, env) : null
  if (installed === null || !installed.startsWith(claudeCodeVersion)) {
    throw new Error(`after npm install, ${binary} reports ${installed ?? "nothing"}, not ${claudeCodeVersion}`)
  }
  return binary
}

const fakeApiKey = "sk-ant-api03-claude-peers-check-not-a-real-key"

/**
 * Writes the throw-away Claude home: `.claude.json` that skips onboarding, approves the fake key (by
 * its last 20 characters, as Claude Code records an approval) and trusts each work directory.
 */
export const writeClaudeHome = ({ home, workDirectories }) => {
  mkdirSync(home, { recursive: true })
  writeFileSync(
    join(home, ".claude.json"),
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: "dark",
      customApiKeyResponses: { approved: [fakeApiKey.slice(-20)], rejected: [] },
      projects: Object.fromEntries(workDirectories.map((dir) => [dir, { hasTrustDialogAccepted: true }]))
    })
  )
}

/**
 * The environment of every process of the run. Variables that would change how Claude Code runs
 * (another API, provider or account; being started from inside a Claude Code session; the
 * workplace's extra CA bundle) are dropped; sockets and temporary files go into the run's own
 * directory; `marker` identifies the run's processes for the cleanup.
 */
export const claudeEnvironment = ({ apiUrl, base, fakeHome, home, marker, runtimeDirectory, temporaryDirectory }) => {
  const env = {}
  for (const [key, value] of Object.entries(base)) {
    if (/^(ANTHROPIC_|CLAUDE_|CLAUDECODE|TMUX|NODE_EXTRA_CA_CERTS$|NODE_OPTIONS$)/.test(key)) continue
    env[key] = value
  }
  const [markerKey, markerValue] = marker.split("=")
  return {
    ...env,
    HOME: fakeHome,
    CLAUDE_CONFIG_DIR: home,
    ANTHROPIC_API_KEY: fakeApiKey,
    ANTHROPIC_BASE_URL: apiUrl,
    NO_PROXY: ["127.0.0.1", "localhost", env.NO_PROXY].filter(Boolean).join(","),
    no_proxy: ["127.0.0.1", "localhost", env.no_proxy].filter(Boolean).join(","),
    XDG_RUNTIME_DIR: runtimeDirectory,
    TMPDIR: temporaryDirectory,
    [markerKey]: markerValue
  }
}
