/**
 * After every test, one turn of the worker's event loop, so that the worker reads what vitest's
 * main process has answered. The worker waits at most 60 s for each answer, and a test that
 * blocks (a `spawnSync` of the built command, an in-process compile) keeps the answers unread:
 * a file of such tests, one after another with no turn between them, failed the run with
 * "Timeout calling onTaskUpdate" once the machine was busy, though every test passed.
 */
import { afterEach } from "vitest"

afterEach(() => new Promise<void>((resolve) => setImmediate(resolve)))
