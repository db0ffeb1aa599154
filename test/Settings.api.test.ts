/**
 * `Settings.update`'s options object, and a caller of the former signature (`update(change, revision)`,
 * from JavaScript or through `any`): its revision is still checked, never an unchecked write.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { setPolicy } from "../src/domain/Settings.js"
import { Settings } from "../src/services/Settings.js"
import { layerMemory, makeMemoryWorld } from "../src/testing.js"

const stale = "0".repeat(64)

describe("Settings.update's revision", () => {
  for (const [how, options] of [["as an option", { expectRevision: stale }], ["as the former second argument", stale]] as const) {
    it.effect(`a revision given ${how} that is not the file's fails with ChangedDuringWrite and writes nothing`, () => {
      const world = makeMemoryWorld()
      world.tree.makeDirectory(world.home.root, 0o700)
      world.tree.writeFile(world.home.settingsFile, "{}\n")
      return Effect.gen(function*() {
        const settings = yield* Settings
        const error = yield* Effect.flip(settings.update(setPolicy("hold"), options as never))
        expect(error._tag).toBe("ChangedDuringWrite")
        expect(new TextDecoder().decode(world.tree.readFile(world.home.settingsFile))).toBe("{}\n")
      }).pipe(Effect.provide(layerMemory(world)))
    })
  }
})
