/**
 * Hostile registries on the real OS: whatever sits in the directory, the scan finishes, every file
 * gets a verdict, and nothing hangs or crashes. (FIFOs, directories, device links, oversized and
 * malformed files are also in the conformance suite; these are the cases only the OS can play.)
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { Registry } from "../src/services/Registry.js"
import { recordText } from "./support/records.js"
import { makeNodeRegistry, type World } from "./support/worlds.js"

const worlds: Array<World> = []
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()))
})
const newWorld = () => {
  const world = makeNodeRegistry()
  worlds.push(world)
  return world
}
const inspect = (world: World) => Effect.runPromise(Effect.provide(Effect.flatMap(Registry, (r) => r.inspect), world.layer))

describe("registry on hostile files (real OS)", () => {
  it("a socket, a link loop, a 1 GiB sparse file, and a file named like a record inside a subdirectory", async () => {
    const world = newWorld()
    const server = net.createServer()
    await new Promise<void>((resolve) => server.listen(path.join(world.sessions, "201.json"), resolve))
    try {
      world.symlink(path.join(world.sessions, "203.json"), "202.json")
      world.symlink(path.join(world.sessions, "202.json"), "203.json")
      const sparse = path.join(world.sessions, "204.json")
      fs.writeFileSync(sparse, "")
      fs.truncateSync(sparse, 1024 * 1024 * 1024)
      world.mkdir("sub")
      world.write("sub/205.json", recordText(205))
      const entries = await inspect(world)
      expect(entries.map((e) => [path.basename(e.file), e.verdict._tag])).toEqual([
        ["201.json", "not_a_file"],
        ["202.json", "unreadable"],
        ["203.json", "unreadable"],
        ["204.json", "too_large"]
      ])
    } finally {
      server.close()
    }
  })

  it("a FIFO with a writer waiting on it is never opened (the writer stays blocked)", async () => {
    const world = newWorld()
    world.mkfifo("206.json")
    world.symlink(path.join(world.sessions, "206.json"), "207.json")
    // A writer blocks in open() until some reader opens the FIFO: if the scan opened it, the
    // writer would finish.
    const writer = spawn("sh", ["-c", `echo hi > '${path.join(world.sessions, "206.json")}'`], { stdio: "ignore" })
    try {
      const entries = await inspect(world)
      expect(entries.map((e) => e.verdict)).toEqual([
        { _tag: "not_a_file", type: "FIFO" },
        { _tag: "not_a_file", type: "FIFO" }
      ])
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(writer.exitCode).toBe(null)
    } finally {
      writer.kill("SIGKILL")
    }
  })

  it("a record rewritten in place while it is read is live or, rarely, malformed; never anything else", async () => {
    const world = newWorld()
    const proc = world.spawn()
    const file = path.join(world.sessions, `${proc.pid}.json`)
    world.write(`${proc.pid}.json`, recordText(proc.pid, { procStart: proc.startTime }))
    // Like Claude Code: truncate and write the same file in place, in two writes, every 2 ms.
    const script = `
      const fs = require("node:fs");
      const [file, pid, start] = process.argv.slice(1);
      let i = 0;
      setInterval(() => {
        i++;
        const text = JSON.stringify({ pid: Number(pid), sessionId: "s", name: "n", messagingSocketPath: "/tmp/x.sock",
          procStart: start, status: i % 2 ? "busy" : "idle", pad: "x".repeat(4000 + (i % 500)) });
        const fd = fs.openSync(file, "w"); fs.writeSync(fd, text.slice(0, 2000)); fs.writeSync(fd, text.slice(2000)); fs.closeSync(fd);
      }, 2)`
    const writer = spawn(process.execPath, ["-e", script, file, String(proc.pid), proc.startTime], { stdio: "ignore" })
    try {
      const seen = new Map<string, number>()
      for (let i = 0; i < 60; i++) {
        const [entry] = await inspect(world)
        seen.set(entry!.verdict._tag, (seen.get(entry!.verdict._tag) ?? 0) + 1)
      }
      expect([...seen.keys()].every((v) => v === "live" || v === "malformed")).toBe(true)
      expect(seen.get("live") ?? 0).toBeGreaterThan(0)
    } finally {
      writer.kill("SIGKILL")
    }
  })

  it("pid 0, negative and fractional pids, huge numbers and a NUL-filled file: each its verdict", async () => {
    const world = newWorld()
    world.write("1.json", recordText(0))
    world.write("2.json", recordText(-2))
    world.write("3.json", recordText(0.5))
    world.write("4.json", "{\"pid\":1e400,\"sessionId\":\"s\"}")
    world.write("5.json", Buffer.alloc(4096))
    world.write("2147483648.json", recordText(2147483648))
    world.write("99999999999.json", recordText(5))
    world.write("6.json", recordText(6, { sessionId: "" }))
    const entries = await inspect(world)
    expect(entries.map((e) => [path.basename(e.file), e.verdict._tag])).toEqual([
      ["1.json", "invalid_pid"],
      ["2.json", "invalid_pid"],
      ["2147483648.json", "invalid_pid"],
      ["3.json", "invalid_pid"],
      ["4.json", "invalid_pid"],
      ["5.json", "malformed"],
      ["6.json", "empty_session_id"],
      ["99999999999.json", "pid_mismatch"]
    ])
    expect(entries.find((e) => e.file.endsWith("/6.json"))).toMatchObject({ pid: 6, sessionId: "", name: "work-6" })
  })

  it("list and inspect decide liveness alike, even for a thread id among many stale records", async () => {
    const world = newWorld()
    // A thread of this process: `kill` reaches it, but /proc does not list it.
    const tid = fs.readdirSync(`/proc/${process.pid}/task`).map(Number).find((t) => t !== process.pid)!
    const stat = fs.readFileSync(`/proc/${process.pid}/task/${tid}/stat`, "latin1")
    const procStart = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!
    world.write(`${tid}.json`, recordText(tid, { procStart }))
    const proc = world.spawn()
    world.write(`${proc.pid}.json`, recordText(proc.pid, { procStart: proc.startTime }))
    // Enough file pids that the probe may take one listing of /proc instead of a kill each.
    // Stale records that fail before the process check, so that only `list` used to count them.
    for (let pid = 3_000_000; pid < 3_000_080; pid++) world.write(`${pid}.json`, recordText(pid, { name: "" }))
    const both = await Effect.runPromise(
      Effect.provide(Effect.flatMap(Registry, (r) => Effect.all({ entries: r.inspect, live: r.list })), world.layer)
    )
    const liveInInspect = both.entries.flatMap((e) => (e.verdict._tag === "live" ? [e.verdict.session.pid] : []))
    expect(both.live.map((s) => s.pid)).toEqual(liveInInspect.sort((a, b) => a - b))
    expect(liveInInspect).toContain(proc.pid)
  })
})
