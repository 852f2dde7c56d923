/**
 * Keeps one of Node's `process.nextTick` queue entries alive for the life of
 * the process, so that V8 keeps the hidden classes ("maps") of those entries,
 * and `nextTick` stays on its fast path. Imported first by `main.ts`, before
 * the service loads anything else.
 *
 * Why: Node 20 builds each entry as `{[async_id_symbol]: …,
 * [trigger_async_id_symbol]: …, callback, args}`. An object literal with
 * computed keys is built property by property, and V8 records the map it saw
 * before each property in the function's feedback (weakly). Only one map may
 * ever be seen there: a second sends that site to "megamorphic" for good, and
 * optimized code then defines the three remaining properties through V8's
 * runtime. The maps after the first property are held only by live entries
 * (and weakly by the transition tree). When a full collection runs while no
 * entry is queued (startup: migrations, the embedded database's WebAssembly),
 * V8 frees them; the next entry builds new ones, which the feedback has not
 * seen. Measured (perf, `GET /v1/agents`): `nextTick` then cost 5–7 µs per
 * request in V8's runtime (`Runtime_DefineKeyedOwnPropertyInLiteral`),
 * against 0.3 µs in the effect ceiling, whose small heap never collected
 * them; every embedded service process checked (3 of 3) had the three sites
 * megamorphic.
 *
 * An entry is reachable from its own callback as the current async resource,
 * a public API (`async_hooks.executionAsyncResource`), and holding it holds
 * its map and, through each map's back pointer, the maps before it.
 */
import { executionAsyncResource } from "node:async_hooks"

/** The entry held, once its callback has run (`undefined` until then). */
export let heldTickEntry: object | undefined

process.nextTick(() => {
  heldTickEntry = executionAsyncResource()
})
