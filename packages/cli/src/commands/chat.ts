/**
 * `chat`: talk to the tenant's agents as an API key, their answers streamed
 * token by token.
 *
 * One message with `--message`; otherwise one message per line of standard
 * input — typed at a `> ` prompt on a terminal (Ctrl-D ends), or piped, until
 * end of input. Every message after the first continues the same chat (its
 * `chat_id`), so an agent asking for a missing parameter gets the answer.
 *
 * A failure ends the command with the usual `error: ...` line and exit code 1;
 * at a terminal it is shown and the conversation goes on.
 */
import { Chat } from "@agent-platform/domain"
import * as Sdk from "@agent-platform/sdk"
import { Effect, Option, Redacted, Ref, Schema, Stdio, Stream } from "effect"
import { Command, Flag } from "effect/cli"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as ChatTranscript from "../ChatTranscript.ts"
import * as Connection from "../Connection.ts"
import * as FailureReport from "../FailureReport.ts"
import * as Invocation from "../Invocation.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"
import * as Transport from "../Transport.ts"

/** The answer failed after it started: the stream's `{type: error}` event. */
export class ChatTurnFailed extends Schema.TaggedError<ChatTurnFailed>()("ChatTurnFailed", {
  message: Schema.String
}) {}

/** The space or its agents do not exist (404 before the answer starts). */
export class NothingToChatWith extends Schema.TaggedError<NothingToChatWith>()("NothingToChatWith", {
  message: Schema.String
}) {}

/** How the conversation is shown: one JSON line per event, or a transcript for people. */
interface Presentation {
  readonly json: boolean
  readonly interactive: boolean
}

/** A conversation: the chat it continues (none until the first answer names it) and the transcript so far. */
interface Conversation {
  readonly chatId: string | null
  readonly transcript: ChatTranscript.Transcript
}

/** Sends one message and shows its answer as it streams; remembers the chat it belongs to. */
const turn = Effect.fnUntraced(function*(
  connection: Connection.WithApiKey,
  conversation: Ref.Ref<Conversation>,
  presentation: Presentation,
  space: Option.Option<string>,
  message: string
) {
  const { chatId } = yield* Ref.get(conversation)
  // A continued chat stays in its space: the server ignores `space` then, so it is sent with the first message only.
  const request: Chat.ChatRequest = chatId !== null
    ? { message, chat_id: chatId }
    : Option.match(space, { onNone: () => ({ message }), onSome: (code) => ({ message, space: code }) })
  const show = (event: Chat.ChatEvent) =>
    Effect.gen(function*() {
      if ("type" in event && event.type === "agent_info") {
        yield* Ref.update(conversation, (c) => ({ ...c, chatId: event.chat_id }))
      }
      if (presentation.json) {
        return yield* Output.jsonLine(event)
      }
      const { transcript } = yield* Ref.get(conversation)
      const rendered = ChatTranscript.render(transcript, event)
      yield* Ref.update(conversation, (c) => ({ ...c, transcript: rendered.next }))
      if (rendered.text.length > 0) yield* Output.write(rendered.text)
    })
  // The answer's line is closed before anything else is printed, an error line included.
  const endLine = Effect.gen(function*() {
    const rendered = ChatTranscript.end((yield* Ref.get(conversation)).transcript)
    yield* Ref.update(conversation, (c) => ({ ...c, transcript: rendered.next }))
    if (rendered.text.length > 0) yield* Output.write(rendered.text)
  }).pipe(Effect.ignore)
  // The stream's `{type: error}` event, if any: it ends the turn (`[DONE]` follows) and fails it.
  const outcome = yield* Sdk.chatStream({ baseUrl: connection.url, apiKey: Redacted.value(connection.apiKey) }, request)
    .pipe(
      Stream.provideService(HttpClient.HttpClient, connection.http),
      Stream.runFoldEffect(
        (): { readonly events: number; readonly failure: string | undefined } => ({ events: 0, failure: undefined }),
        (turn, event) =>
          Effect.as(show(event), {
            events: turn.events + 1,
            failure: "type" in event && event.type === "error" ? event.error : turn.failure
          })
      ),
      Effect.ensuring(endLine)
    )
  // Every answer starts with `agent_info`: a 200 without a single event is not a chat stream.
  if (outcome.events === 0) {
    return yield* new Transport.UnexpectedAnswer({
      message: `${connection.url} answered the chat without a single event`
    })
  }
  if (outcome.failure !== undefined) return yield* new ChatTurnFailed({ message: outcome.failure })
}, (effect) =>
  effect.pipe(Effect.catchTags({
    NotFound: (notFound) => Effect.flatMap(nothingToChatWith(notFound.error), Effect.fail),
    // No answer came: the transport's own error, so a refused connection or a late answer is told as every command tells it.
    ChatStreamError: (broken) =>
      Effect.fail(
        (broken.reason === "Unreachable" || broken.reason === "Timeout") &&
          HttpClientError.isHttpClientError(broken.cause)
          ? broken.cause
          : broken
      )
  })))

/** A chat with no space or agent to answer it ends in a 404: say how to make one. */
const nothingToChatWith = (message: string) =>
  Effect.gen(function*() {
    const spaces = yield* Invocation.command("spaces list")
    const createSpace = yield* Invocation.command("spaces create")
    const createAgent = yield* Invocation.command("agents create")
    return new NothingToChatWith({
      message: `${message}: ${spaces} shows the spaces; ${createSpace} and ${createAgent} make one to chat in`
    })
  })

/** The messages of standard input: one per non-blank line, until end of input. */
const inputLines = (stdio: Stdio.Stdio) =>
  stdio.stdin.pipe(
    Stream.decodeText(),
    Stream.splitLines,
    Stream.map((line) => line.trim()),
    Stream.filter((line) => line.length > 0)
  )

export const chat = Command.make(
  "chat",
  {
    space: Flag.String("space").pipe(
      Flag.withDescription("The space to chat in, by code or id (default: the key's space, else the tenant's first)"),
      Flag.withSchema(Schema.String.check(Schema.isMinLength(1))),
      Flag.optional
    ),
    message: Flag.String("message").pipe(
      Flag.withAlias("m"),
      Flag.withDescription("Send this one message, print the answer and exit (default: one message per line of stdin)"),
      Flag.withSchema(Chat.ChatRequest.fields.message),
      Flag.optional
    ),
    key: Connection.apiKeyFlag
  },
  Effect.fnUntraced(function*({ space, message, key }) {
    const { json } = yield* root
    const connection = yield* Connection.withApiKey(key)
    const stdio = yield* Stdio.Stdio
    const interactive = Option.isNone(message) && (yield* stdio.stdinIsTerminal)
    const presentation: Presentation = { json, interactive }
    const conversation = yield* Ref.make<Conversation>({
      chatId: null,
      transcript: ChatTranscript.start({ showAgent: interactive && !json })
    })
    const send = (text: string) => turn(connection, conversation, presentation, space, text)
    if (Option.isSome(message)) return yield* send(message.value)

    const prompt = interactive ? Output.write("> ") : Effect.void
    yield* prompt
    yield* inputLines(stdio).pipe(
      Stream.runForEach((line) =>
        // At a terminal a failed message is shown and the next one can be typed; a script stops at the first.
        Effect.andThen(interactive ? Effect.catch(send(line), FailureReport.show) : send(line), prompt)
      )
    )
    // Ctrl-D leaves the cursor after the prompt: the shell's own prompt starts on a line of its own.
    if (interactive) yield* Output.write("\n")
  })
).pipe(
  Command.withDescription(
    "Chat with the tenant's agents as an API key (chat scope): one message per line of stdin, or --message; --json prints every event as a JSON line"
  ),
  Command.withExamples([
    {
      command: "AGENT_PLATFORM_API_KEY=sk_live_... agent-platform chat --space support",
      description: "Chat at a `> ` prompt; Ctrl-D ends"
    },
    {
      command: "agent-platform chat --key sk_live_... --message \"How long do refunds take?\"",
      description: "Ask one question and print the answer"
    },
    {
      command: "printf 'Open a ticket: printer broken\\nhigh\\n' | agent-platform chat --json",
      description: "Two messages in one chat, every event as a JSON line"
    }
  ])
)
