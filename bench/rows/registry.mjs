/**
 * The registry commands, run on every registry of the bench. A row is one entry: its label, the
 * command line (`bench.cli(registry, …)` runs the build under test on the registry's home), and
 * optionally `check(stdout)` (throws when the answer is wrong), `status` (the exit code it must
 * have, 0 by default), `before()` (untimed, before each run) and `env`.
 */
export const rows = (registry, bench) => [
  { label: "list", argv: bench.cli(registry, "list", "--json"), check: bench.expectLive(registry) },
  { label: "inspect", argv: bench.cli(registry, "inspect", "--json") },
  { label: "resolve", argv: bench.cli(registry, "resolve", bench.sessionIdOf(registry.target), "--json"), check: bench.expectPid(registry.target) },
  { label: "resolve --name", argv: bench.cli(registry, "resolve", "--name", `work-${registry.target}`, "--json"), check: bench.expectPid(registry.target) },
  { label: "policy", argv: bench.cli(registry, "policy", "--json"), check: bench.expectPolicies(registry) }
]
