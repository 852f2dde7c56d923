/**
 * `handlersOn`: a handler group serves its requests with the services it
 * names, and only those, whatever else the context it is built in holds.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schema } from "effect"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpRouter from "effect/http/HttpRouter"
import { handlersOn } from "../src/Platform/HandlerGroups.ts"

class Named extends Context.Service<Named, { readonly value: string }>()("test/HandlerGroups/Named") {}
class Unnamed extends Context.Service<Unnamed, { readonly value: string }>()("test/HandlerGroups/Unnamed") {}

const Api = HttpApi.make("handler-groups").add(
  HttpApiGroup.make("probe").add(
    HttpApiEndpoint.get("seen", "/seen", {
      success: Schema.Struct({ named: Schema.String, unnamed: Schema.NullOr(Schema.String) })
    })
  )
)

/** At request time, the handler reads `Named` and looks for `Unnamed`. */
const ProbeHttp = HttpApiBuilder.group(
  Api,
  "probe",
  (handlers) =>
    handlers.handle("seen", () =>
      Effect.gen(function*() {
        const named = yield* Named
        const unnamed = yield* Effect.serviceOption(Unnamed)
        return { named: named.value, unnamed: Option.getOrNull(Option.map(unnamed, (service) => service.value)) }
      }))
)

/**
 * GET /seen through `group`, built in a context holding both services. (The
 * group's per-request requirement, `Named`, is met by the context it closes
 * over, as in Server.ts.)
 */
const serve = (group: typeof ProbeHttp) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      HttpRouter.toWebHandler(
        HttpApiBuilder.layer(Api).pipe(
          Layer.provide(group),
          Layer.provide(Layer.succeed(Named, { value: "named" })),
          Layer.provide(Layer.succeed(Unnamed, { value: "unnamed" })),
          Layer.provide(NodeHttpServer.layerHttpServices)
        ) as Layer.Layer<never, never, HttpRouter.HttpRouter>,
        { disableLogger: true }
      )
    ),
    ({ dispose }) => Effect.promise(() => dispose())
  ).pipe(
    Effect.flatMap(({ handler }) => Effect.promise(() => handler(new Request("http://localhost/seen")))),
    Effect.flatMap((response) => Effect.promise(() => response.json()))
  )

describe("handlersOn", () => {
  it.effect("a group built on its named services sees them, and no other service of its build context", () =>
    Effect.gen(function*() {
      expect(yield* serve(handlersOn(Named)(ProbeHttp))).toEqual({ named: "named", unnamed: null })
    }).pipe(Effect.scoped))

  it.effect("a group built as HttpApiBuilder builds it sees every service of its build context", () =>
    Effect.gen(function*() {
      expect(yield* serve(ProbeHttp)).toEqual({ named: "named", unnamed: "unnamed" })
    }).pipe(Effect.scoped))
})

describe("handlersOn, at compile time", () => {
  it("a group that needs a service it does not name is not a Layer", () => {
    const built = handlersOn(Unnamed)(ProbeHttp)
    // @ts-expect-error ProbeHttp needs Named, which the list misses: the result names it instead of being a Layer.
    const layer: Layer.Layer<unknown, unknown, unknown> = built
    expect(Layer.isLayer(layer)).toBe(true) // (At run time it is still one: the check is the compiler's.)
  })
})
