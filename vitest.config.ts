import { defineConfig } from "vitest/config"

// The examples' own tests run where a user runs them: in a project that installed the packed
// package (test/Package.test.ts), not here.
export default defineConfig({ test: { include: ["test/**/*.test.ts"] } })
