/**
 * Which service a command talks to, and as whom.
 *
 * The URL is `--url`, else `AGENT_PLATFORM_URL`, else the one the stored
 * session was signed in to, else the local default. The stored session is
 * only ever sent to the URL it was issued by.
 *
 * The `/v1` commands (`chat`, `knowledge`) act as an API key instead: `--key`,
 * else `AGENT_PLATFORM_API_KEY`.
 *
 * Every request waits at most `--timeout` seconds for its answer.
 */
import * as Sdk from "@agent-platform/sdk"
import { Config, Effect, Option, Redacted, Ref, Schema } from "effect"
import { Flag } from "effect/cli"
import * as HttpClient from "effect/http/HttpClient"
import * as Invocation from "./Invocation.ts"
import { root } from "./Root.ts"
import * as SessionFile from "./SessionFile.ts"
import * as Transport from "./Transport.ts"

export const defaultUrl = "http://127.0.0.1:8080"

/** The command needs a session and there is none for the URL. */
export class NotSignedIn extends Schema.TaggedError<NotSignedIn>()("NotSignedIn", { message: Schema.String }) {}

/** `--url` or `AGENT_PLATFORM_URL` is not an http(s) URL. */
export class InvalidUrl extends Schema.TaggedError<InvalidUrl>()("InvalidUrl", { message: Schema.String }) {}

/** A `/v1` command was run without an API key. */
export class NoApiKey extends Schema.TaggedError<NoApiKey>()("NoApiKey", { message: Schema.String }) {}

/** A client for the chosen URL, anonymous or signed in. */
export interface Connection {
  readonly url: string
  readonly client: Sdk.Connected
  /** The HTTP client under `client`, with the `--timeout` deadline (for the chat stream and downloads). */
  readonly http: HttpClient.HttpClient
}

/** A client carrying the stored session. */
export interface SignedIn extends Connection {
  readonly session: SessionFile.StoredSession
}

const normalize = (raw: string): Effect.Effect<string, InvalidUrl> => {
  const url = URL.canParse(raw) ? new URL(raw) : undefined
  return url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")
    ? Effect.fail(new InvalidUrl({ message: `invalid URL "${raw}": expected http(s)://host[:port]` }))
    : Effect.succeed(`${url.origin}${url.pathname.replace(/\/+$/, "")}`)
}

/** The URL to use, given what is stored; remembered for explaining failures. */
const chooseUrl = Effect.fnUntraced(function*(stored: Option.Option<SessionFile.StoredSession>) {
  const flags = yield* root
  const fromEnv = yield* Config.option(Config.String("AGENT_PLATFORM_URL")).pipe(Effect.orDie)
  const url = Option.isSome(flags.url)
    ? yield* normalize(flags.url.value)
    : Option.isSome(fromEnv)
    ? yield* normalize(fromEnv.value)
    : Option.isSome(stored)
    ? stored.value.url
    : defaultUrl
  yield* Ref.set(yield* Transport.ChosenUrl, Option.some(url))
  return url
})

/** The typed client for `url`, over an HTTP client that waits at most `--timeout` for each answer. */
const connect = Effect.fnUntraced(function*(url: string, credentials: Omit<Sdk.ClientOptions, "baseUrl"> = {}) {
  const { timeout } = yield* root
  const http = Transport.withDeadline(yield* HttpClient.HttpClient, timeout)
  const client = yield* Sdk.make({ baseUrl: url, ...credentials }).pipe(
    Effect.provideService(HttpClient.HttpClient, http)
  )
  return { url, client, http } satisfies Connection
})

/** A client authenticated with an API key, and the key itself (the chat stream sends it too). */
export interface WithApiKey extends Connection {
  readonly apiKey: Redacted.Redacted<string>
}

/** `--key`, for the commands that act as an API key. */
export const apiKeyFlag = Flag.Redacted("key").pipe(
  Flag.withDescription(
    "API key (sk_live_...) to act as (default: AGENT_PLATFORM_API_KEY, which keeps it out of the process list)"
  ),
  Flag.optional
)

/** A client for the chosen URL acting as `--key`, else `AGENT_PLATFORM_API_KEY`, else `NoApiKey`. */
export const withApiKey = Effect.fnUntraced(function*(flag: Option.Option<Redacted.Redacted<string>>) {
  const fromEnv = yield* Config.option(Config.Redacted("AGENT_PLATFORM_API_KEY")).pipe(Effect.orDie)
  const apiKey = Option.orElse(flag, () => fromEnv)
  if (Option.isNone(apiKey) || Redacted.value(apiKey.value).trim() === "") {
    return yield* new NoApiKey({
      message: `no API key: pass --key sk_live_... or set AGENT_PLATFORM_API_KEY (create one with ${yield* Invocation
        .command("keys create")})`
    })
  }
  const stored = yield* SessionFile.read.pipe(Effect.orElseSucceed(() => Option.none()))
  const connection = yield* connect(yield* chooseUrl(stored), { apiKey: apiKey.value })
  return { ...connection, apiKey: apiKey.value } satisfies WithApiKey
})

/** A client without a session (`login`, `health`); an unreadable session file only loses its URL. */
export const anonymous = Effect.gen(function*() {
  const stored = yield* SessionFile.read.pipe(Effect.orElseSucceed(() => Option.none()))
  return yield* connect(yield* chooseUrl(stored))
})

/** A client signed in with the stored session, or `NotSignedIn`. */
export const signedIn = Effect.gen(function*() {
  const stored = yield* SessionFile.read
  const url = yield* chooseUrl(stored)
  if (Option.isNone(stored)) {
    return yield* new NotSignedIn({ message: `not signed in: run ${yield* Invocation.command("login")}` })
  }
  if (stored.value.url !== url) {
    return yield* new NotSignedIn({
      message: `not signed in to ${url}: run ${yield* Invocation.command(`login --url ${url}`)}`
    })
  }
  const connection = yield* connect(url, { sessionToken: stored.value.sessionToken })
  return { ...connection, session: stored.value } satisfies SignedIn
})

/**
 * Keeps a token the server renewed during the command (it renews sessions
 * past half their life), so that using the CLI keeps the session alive.
 */
const keepRenewedToken = ({ client, session }: SignedIn) =>
  Effect.gen(function*() {
    const token = yield* client.sessionToken
    if (token !== undefined && token !== session.sessionToken) {
      yield* SessionFile.write({ ...session, sessionToken: token })
    }
  }).pipe(Effect.ignore)

/** Runs `use` with the stored session (see {@link signedIn}), keeping a renewed token afterwards. */
export const withSession = <A, E, R>(use: (connection: SignedIn) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(signedIn, (connection) => use(connection).pipe(Effect.ensuring(keepRenewedToken(connection))))
