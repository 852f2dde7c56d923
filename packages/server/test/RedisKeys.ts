/**
 * The Redis keys of a test run: every run writes under a private prefix, and
 * deletes everything under it when it ends.
 */
import { Effect } from "effect"
import { createClient } from "redis"

/** Runs `use` with a client connected to `url`, closed afterwards. */
const withClient = <A>(url: string, use: (client: ReturnType<typeof createClient>) => Promise<A>) =>
  Effect.promise(async () => {
    const client = createClient({ url })
    await client.connect()
    try {
      return await use(client)
    } finally {
      await client.close()
    }
  })

/** The keys under `prefix`. */
export const keysUnder = (url: string, prefix: string) =>
  withClient(url, async (client) => {
    const keys: Array<string> = []
    for await (const batch of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) keys.push(...batch)
    return keys
  })

/**
 * Deletes every key under `prefix` when the scope closes. Acquire it before
 * what writes the keys, so that it runs after that has stopped.
 */
export const deleteKeysOnClose = (url: string, prefix: string) =>
  Effect.addFinalizer(() =>
    withClient(url, async (client) => {
      for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
        if (keys.length > 0) await client.unlink(keys)
      }
    }).pipe(Effect.ignore)
  )

/** Makes the Redis server at `url` forget every Lua script it was sent (as a restart does). */
export const flushScripts = (url: string) => withClient(url, (client) => client.scriptFlush())
