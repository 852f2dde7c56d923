/**
 * The typed client for Promise users: the same groups and methods as the
 * Effect client, each returning a Promise. A failed call rejects with an
 * instance of an exported error class with `_tag`, `status` and `message`
 * (see `PlatformError.ts`): `ApiError` for an error the service declares
 * (`{ _tag: "ScopeMissing", status: 403, message: "..." }`),
 * `InvalidInputError` for arguments the contract refuses (nothing is sent),
 * and `ConnectionError`, `TimeoutError` or `UnexpectedResponse` when no
 * answer, or no answer of this service, came.
 */
import type { Knowledge } from "@agent-platform/domain"
import { type Duration, Effect, ManagedRuntime } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import { type ClientOptions, make, type PlatformClient } from "./Client.ts"
import { waitUntilReady } from "./Knowledge.ts"
import { PlatformError, toPlatformError } from "./PlatformError.ts"

/**
 * The decoded body of a call. Client methods are generic over their response
 * mode; the Promise client always decodes, so the raw-response variants go.
 */
type Decoded<A> = Exclude<
  A,
  HttpClientResponse.HttpClientResponse | readonly [unknown, HttpClientResponse.HttpClientResponse]
>

type PromiseMethod<F> = F extends (...args: infer Args) => Effect.Effect<infer A, infer _E, infer _R>
  ? (...args: Args) => Promise<Decoded<A>>
  : never

type Promisified<T> = {
  readonly [Group in keyof T]: T[Group] extends (...args: ReadonlyArray<any>) => unknown ? PromiseMethod<T[Group]>
    : { readonly [Method in keyof T[Group]]: PromiseMethod<T[Group][Method]> }
}

/** A knowledge file that did not become `ready`: it `failed`, or the wait timed out (`file` is its last state). */
export class IngestionNotReadyError extends PlatformError {
  readonly file: Knowledge.KnowledgeFile | undefined
  constructor(message: string, file: Knowledge.KnowledgeFile | undefined) {
    super({ _tag: "IngestionNotReady", status: undefined, message })
    this.file = file
  }
}

export interface WaitOptions {
  /** How long to wait (default 2 minutes). */
  readonly timeout?: Duration.Input | undefined
  /** How often to look (default every 250 ms). */
  readonly interval?: Duration.Input | undefined
  /** Sees every state, e.g. to draw a progress line. */
  readonly onProgress?: ((file: Knowledge.KnowledgeFile | undefined) => void) | undefined
}

export type PromiseClient = Promisified<PlatformClient> & {
  /**
   * Resolves with the ingested file once it is `ready`; rejects with
   * `IngestionNotReadyError` when it `failed` or the wait timed out.
   */
  readonly waitUntilReady: (
    target: { readonly agentId: string; readonly fileId: string },
    options?: WaitOptions
  ) => Promise<Knowledge.KnowledgeFile>
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
        throw toPlatformError(failure !== undefined && failure._tag === "Fail" ? failure.error : exit.cause)
      })
    )
  const call = (path: ReadonlyArray<string>) => (...args: ReadonlyArray<unknown>) =>
    run((client) => {
      let target: any = client.api
      for (const key of path) target = target[key]
      return target(...args)
    })
  const wait: PromiseClient["waitUntilReady"] = (target, waitOptions) =>
    run((client) =>
      waitUntilReady(client, target, waitOptions).pipe(
        Effect.mapError((error) =>
          error._tag === "IngestionNotReady" ? new IngestionNotReadyError(error.message, error.file) : error
        )
      )
    )
  return new Proxy({} as PromiseClient, {
    get: (_, property) => {
      if (property === "waitUntilReady") return wait
      if (property === "sessionToken") return () => run((client) => client.sessionToken)
      if (property === "dispose") return () => runtime.dispose()
      if (typeof property !== "string" || property === "then") return undefined
      return new Proxy(call([property]), {
        get: (_, method) => typeof method === "string" ? call([property, method]) : undefined
      })
    }
  })
}
