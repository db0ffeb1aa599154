import * as fs from "node:fs"

/**
 * The settings commands, on the first registry only (`firstOnly`: they do not read the registry).
 * `set` alternates its value and `reset` gets its key back before each run, so that every run
 * writes (an update that changes nothing writes nothing).
 */
export const firstOnly = true

export const rows = (registry, bench) => {
  let value = "accept"
  const withKey = () => fs.writeFileSync(registry.settingsFile, `${JSON.stringify({ model: "opus", crossSessionInbound: "hold" }, null, 2)}\n`)
  const set = { label: "settings set", argv: bench.cli(registry, "settings", "set", "accept", "--json") }
  set.before = () => {
    value = value === "accept" ? "refuse" : "accept"
    set.argv = bench.cli(registry, "settings", "set", value, "--json")
  }
  return [
    { label: "settings get", argv: bench.cli(registry, "settings", "get", "--json") },
    set,
    { label: "settings reset", argv: bench.cli(registry, "settings", "reset", "--json"), before: withKey }
  ]
}
