/**
 * Handler groups built on only the services they use.
 *
 * `HttpApiBuilder.group` captures the whole context its layer is built in and
 * merges it into the context of every request it serves (one map copy per
 * request, entry by entry). Built inside the process's services, that is
 * some ninety entries per request, of which a group uses a handful: measured
 * under load, 5–7 µs of the ~75 µs a `GET /health` costs the process. A group
 * built with {@link handlersOn} captures only the services it names.
 *
 * The names are checked against what the group requires, its middleware and
 * its handlers' per-request needs included: a group that needs a service it
 * does not name is not a `Layer`, and the server's composition does not
 * compile, naming what is missing.
 */
import { Context, Effect, Layer } from "effect"
import type * as HttpRouter from "effect/http/HttpRouter"

/** What a group needs from its build context: its services and its handlers' per-request requirements. */
type Needed<R> = HttpRouter.Request.Without<R> | HttpRouter.Request.Only<"Requires", R>

/** The type of a group whose list of services misses some of what it needs. */
export interface MissingServices<Missing> {
  readonly "handlersOn: name these services too": Missing
}

/**
 * The group `layer`, built on `services` alone (each taken from the context
 * it is built in), instead of on all of that context.
 */
export const handlersOn = <const Keys extends ReadonlyArray<Context.Key<any, any>>>(...services: Keys) =>
<A, E, R>(
  layer: Layer.Layer<A, E, R>
): [Exclude<Needed<R>, Context.Service.Identifier<Keys[number]>>] extends [never] ? Layer.Layer<A, E, R>
  : MissingServices<Exclude<Needed<R>, Context.Service.Identifier<Keys[number]>>> =>
  // (The result is the same layer type, or the MissingServices marker only the compiler ever sees.)
  Layer.fromBuildMemo((memoMap, scope) =>
    Layer.buildWithMemoMap(layer, memoMap, scope).pipe(
      Effect.updateContext((context: Context.Context<R>) => Context.pick(...services)(context) as Context.Context<R>)
    )
  ) as any
