import * as fs from "node:fs"
import * as os from "node:os"
import { defineConfig } from "vitest/config"

// Node reads the certificates NODE_EXTRA_CA_CERTS names at every start: with a system bundle, as
// some machines set for every process, 0.1 s of CPU per start, and the tests start over a hundred
// Node processes that inherit the environment (sleepers, update loops, imports of the package).
// None of them makes a TLS connection but npm's in test/Package.test.ts, which gets it back from
// CLAUDE_PEERS_TEST_NODE_EXTRA_CA_CERTS. Deleted here, before vitest starts its workers.
if (process.env.NODE_EXTRA_CA_CERTS !== undefined) {
  process.env.CLAUDE_PEERS_TEST_NODE_EXTRA_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS
  delete process.env.NODE_EXTRA_CA_CERTS
}

// The tests' temporary directories (Claude homes, registries of 20,000 records, the scratch project
// that installs the packed package) go on /dev/shm where TMPDIR names none and /dev/shm can hold
// them as /tmp would: the same system calls on a real file system the kernel keeps in memory. On a
// virtual disk each create, rename and unlink costs far more (Registry.eventLoop.test.ts: 12 s of
// system time in /tmp on ext4, 1.3 s in /dev/shm), and nothing here asks for a disk's behaviour.
// It must be a tmpfs with room for the scratch project's install (a container's default /dev/shm is
// 64 MB), not mounted noexec (that install runs esbuild's binary), and on Linux 6.6 or later, whose
// tmpfs keeps `user.*` extended attributes (the ACL tests would otherwise skip). Set here, before
// vitest starts its workers, which inherit it.
const tmpfs = 0x01021994
const shmFits = (directory: string) => {
  try {
    fs.accessSync(directory, fs.constants.W_OK)
    const info = fs.statfsSync(directory)
    if (info.type !== tmpfs || info.bavail * info.bsize < 2 ** 30) return false
    const [major = 0, minor = 0] = os.release().split(".").map(Number)
    if (major < 6 || (major === 6 && minor < 6)) return false
    // mountinfo: `id parent dev root mountpoint options …`; the last mount of a point is the one seen.
    const mount = fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((line) => line.split(" "))
      .filter((fields) => fields[4] === directory).at(-1)
    return mount !== undefined && !mount[5]!.split(",").includes("noexec")
  } catch {
    return false
  }
}
if (process.env.TMPDIR === undefined && process.platform === "linux" && shmFits("/dev/shm")) process.env.TMPDIR = "/dev/shm"

export default defineConfig({
  test: {
    // The examples' own tests run where a user runs them: in a project that installed the packed
    // package (test/Package.test.ts), not here.
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/support/turnTheEventLoop.ts"],
    // Nothing here is timed (speed is `npm run bench`'s): a limit only catches a hang, and must not
    // fail a heavy test (10,000 duplicate members, real processes, properties) on a busy machine.
    testTimeout: 60_000,
    // Two files at a time: vitest's default on 2 cores is one worker, and most files wait on child
    // processes and the file system, not the CPU (16 files: 294 s with one fork, 106 s with two).
    pool: "forks",
    // A worker runs its files one after another in one process, loading effect and the sources
    // once rather than once per file. So a test that changes what the process shares
    // (`process.env`, a spy on a global, a signal handler) puts it back before it ends.
    isolate: false,
    maxWorkers: 2,
    minWorkers: 1,
    hookTimeout: 120_000
  }
})
