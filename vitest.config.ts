import { defineConfig } from "vitest/config"

// vitest 5 declares Node 22; on Node 20 its reporter needs Map.groupBy (Node 21+).
if (typeof (Map as { groupBy?: unknown }).groupBy !== "function") {
  Object.defineProperty(Map, "groupBy", {
    value: <K, V>(items: Iterable<V>, key: (item: V, index: number) => K) => {
      const groups = new Map<K, Array<V>>()
      let index = 0
      for (const item of items) {
        const k = key(item, index++)
        const group = groups.get(k)
        if (group === undefined) groups.set(k, [item])
        else group.push(item)
      }
      return groups
    }
  })
}

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    globalSetup: ["packages/server/test/globalSetup.ts", "packages/server/test/serviceBundles.ts"],
    setupFiles: ["packages/server/test/setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: "forks",
    maxWorkers: 2,
    fileParallelism: true,
    // A committed `.only` would silently skip the rest of the suite: refuse it (also outside CI).
    allowOnly: false
  }
})
