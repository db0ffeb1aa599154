/**
 * `claude-peers/testing/conformance`: the ports' conformance suites, for a port author to run on
 * their own layer. Each declares its tests with `@effect/vitest` (an optional peer dependency, which
 * only this entry needs; `claude-peers/testing` does not import it).
 */
export { filesConformance, FilesFixture, fixtureOfTree, layerFixtureNode, layerMemory as layerFilesMemory } from "./FilesConformance.js"
export { layerMemory as layerProcessProbeMemory, ProcessController, processProbeConformance } from "./ProcessProbeConformance.js"
