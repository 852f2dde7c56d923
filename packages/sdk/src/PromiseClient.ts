/**
 * The typed client for Promise users: the same groups and methods as the
 * Effect client, each returning a Promise. A failed call rejects with the
 * typed error (`_tag` and `error`, e.g. `{ _tag: "ScopeMissing", error: "..." }`).
 */
import { Effect, ManagedRuntime } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import { type ClientOptions, make, type PlatformClient } from "./Client.ts"

/**
 * The decoded body of a call. Client methods are generic over their response
 * mode; the Promise client always decodes, so the raw-response variants go.
 */
type Decoded<A> = Exclude<A, HttpClientResponse.HttpClientResponse | readonly [unknown, HttpClientResponse.HttpClientResponse]>

type PromiseMethod<F> = F extends (...args: infer Args) => Effect.Effect<infer A, infer _E, infer _R>
  ? (...args: Args) => Promise<Decoded<A>>
  : never

type Promisified<T> = {
  readonly [Group in keyof T]: T[Group] extends (...args: ReadonlyArray<any>) => unknown ? PromiseMethod<T[Group]>
    : { readonly [Method in keyof T[Group]]: PromiseMethod<T[Group][Method]> }
}

export type PromiseClient = Promisified<PlatformClient> & {
  /** The session token after `auth.login`, to persist and pass back as `sessionToken`. */
  readonly sessionToken: () => Promise<string | undefined>
  /** Releases the client's resources. */
  readonly dispose: () => Promise<void>
}

/** Creates a Promise-based client. */
export const makePromiseClient = (options: ClientOptions): PromiseClient => {
  const runtime = ManagedRuntime.make(FetchHttpClient.layer)
  const connected = runtime.runPromise(make(options))
  const run = <A>(f: (client: Awaited<typeof connected>) => Effect.Effect<A, unknown, never>) =>
    connected.then((client) =>
      runtime.runPromiseExit(f(client)).then((exit) => {
        if (exit._tag === "Success") return exit.value
        const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
        throw failure !== undefined && failure._tag === "Fail" ? failure.error : new Error(String(exit.cause))
      })
    )
  const call = (path: ReadonlyArray<string>) => (...args: ReadonlyArray<unknown>) =>
    run((client) => {
      let target: any = client.api
      for (const key of path) target = target[key]
      return target(...args)
    })
  return new Proxy({} as PromiseClient, {
    get: (_, property) => {
      if (property === "sessionToken") return () => run((client) => client.sessionToken)
      if (property === "dispose") return () => runtime.dispose()
      if (typeof property !== "string" || property === "then") return undefined
      return new Proxy(call([property]), {
        get: (_, method) => typeof method === "string" ? call([property, method]) : undefined
      })
    }
  })
}
