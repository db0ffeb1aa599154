/**
 * The human tables: aligned columns, and no line that ends in the padding of an empty last cell.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { table } from "../src/cli/Text.js"

const word = fc.stringMatching(/^[a-z0-9/:.-]{0,12}$/)

describe("table", () => {
  it("starts each column at one offset in every line, and ends no line with a space", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }).chain((width) =>
          fc.tuple(
            fc.array(word.filter((w) => w.length > 0), { minLength: width, maxLength: width }),
            fc.array(fc.array(word, { minLength: width, maxLength: width }))
          )
        ),
        ([header, rows]) => {
          const lines = table(header, rows).split("\n")
          expect(lines).toHaveLength(rows.length + 1)
          for (const line of lines) expect(line).not.toMatch(/ $/)
          // Where each header's column starts, every row's cell starts (or the row has ended).
          let offset = 0
          for (const [i, name] of header.entries()) {
            for (const [r, row] of [header, ...rows].entries()) {
              const cell = row[i]!
              if (cell.length > 0) expect(lines[r]!.slice(offset, offset + cell.length)).toBe(cell)
            }
            offset += Math.max(name.length, ...rows.map((row) => row[i]!.length)) + 2
          }
        }
      )
    ))

  it("leaves out the padding of an empty last cell", () => {
    expect(table(["SOURCE", "DETAIL"], [["userSettings", ""], ["flag", "no --settings argument"]])).toBe(
      "SOURCE        DETAIL\nuserSettings\nflag          no --settings argument"
    )
  })
})
