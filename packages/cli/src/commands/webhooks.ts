/**
 * `webhooks create|list|log|retry`: outbound webhook subscriptions — the
 * service POSTs `on_action_executed` / `on_action_failed` events to a URL —
 * their delivery log, and retrying a dead letter (admin).
 */
import { Webhooks } from "@agent-platform/domain"
import { Config, Console, Effect, Option, Redacted, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Connection from "../Connection.ts"
import * as HttpUrl from "../HttpUrl.ts"
import * as Invocation from "../Invocation.ts"
import * as Output from "../Output.ts"
import { root } from "../Root.ts"

/** A signing secret the API takes. */
const isSecret = Schema.is(Webhooks.CreateWebhookSubscription.fields.signing_secret.schema)

const subscriptionArgument = Argument.String("subscription").pipe(
  Argument.withDescription("The subscription's id, as `webhooks list` shows it")
)

const create = Command.make(
  "create",
  {
    name: Flag.String("name").pipe(
      Flag.withDescription("What the subscription is for"),
      Flag.withSchema(Webhooks.CreateWebhookSubscription.fields.name)
    ),
    url: Flag.String("endpoint").pipe(
      Flag.withDescription(
        "Where deliveries are POSTed (https; http and private addresses only where the server allows them)"
      ),
      Flag.filter(HttpUrl.isHttpUrl, () => HttpUrl.rule),
      Flag.withSchema(Webhooks.CreateWebhookSubscription.fields.url)
    ),
    event: Flag.Literals("event", ["on_action_executed", "on_action_failed", "*"] as const).pipe(
      Flag.withDescription("The events to deliver (default *: both)"),
      Flag.withDefault("*" as const)
    ),
    secret: Flag.Redacted("signing-secret").pipe(
      Flag.withDescription(
        "Sign deliveries with this secret (16 to 256 characters; prefer AGENT_PLATFORM_WEBHOOK_SECRET)"
      ),
      Flag.withFallbackConfig(Config.Redacted("AGENT_PLATFORM_WEBHOOK_SECRET")),
      // Checked here, not by the client's encoding of the payload: a usage error names the flag and keeps the secret out.
      Flag.filter((secret) => isSecret(Redacted.value(secret)), () => "16 to 256 characters"),
      Flag.optional
    )
  },
  Effect.fnUntraced(function*({ name, url, event, secret }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const subscription = yield* client.api.webhooks.create({
        payload: {
          name,
          url,
          event_filter: event,
          ...(Option.isSome(secret) ? { signing_secret: Redacted.value(secret.value) } : {})
        }
      })
      if (json) return yield* Output.json(subscription)
      yield* Console.log(
        `Subscribed ${Output.printable(subscription.url)} to ${subscription.event_filter}${
          subscription.has_signing_secret ? ", signed" : ""
        }: subscription ${subscription.id}.`
      )
      yield* Console.log(`Follow its deliveries with ${yield* Invocation.command(`webhooks log ${subscription.id}`)}.`)
    }))
  })
).pipe(
  Command.withDescription("Subscribe a URL to action events"),
  Command.withExamples([{
    command:
      "agent-platform webhooks create --name ops --endpoint https://ops.example.com/hooks --event on_action_failed",
    description: "Tell the ops endpoint about failed actions"
  }])
)

const list = Command.make(
  "list",
  {},
  Effect.fnUntraced(function*() {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const listed = yield* client.api.webhooks.list()
      if (json) return yield* Output.json(listed)
      if (listed.subscriptions.length === 0) {
        return yield* Console.log(
          `No webhook subscriptions yet: create one with ${yield* Invocation.command("webhooks create")}.`
        )
      }
      yield* Output.table<typeof Webhooks.WebhookSubscription.Type>([
        ["id", (s) => s.id],
        ["name", (s) => s.name],
        ["url", (s) => s.url],
        ["events", (s) => s.event_filter],
        ["active", (s) => Output.yesNo(s.is_active)],
        ["signed", (s) => Output.yesNo(s.has_signing_secret)],
        ["delivered", (s) => String(s.total_delivered)],
        ["dead", (s) => String(s.total_dead_letter)]
      ], listed.subscriptions)
    }))
  })
).pipe(Command.withDescription("List the webhook subscriptions with their delivery counts"))

const log = Command.make(
  "log",
  {
    subscription: subscriptionArgument,
    limit: Flag.Int("limit").pipe(
      Flag.withDescription("How many deliveries, newest first (1 to 200, default 50)"),
      Flag.withSchema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 }))),
      Flag.optional
    ),
    cursor: Flag.String("cursor").pipe(
      Flag.withDescription("Continue after a previous page (its next cursor)"),
      Flag.optional
    )
  },
  Effect.fnUntraced(function*({ subscription, limit, cursor }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const page = yield* client.api.webhooks.log({
        params: { id: subscription },
        query: {
          ...(Option.isSome(limit) ? { limit: limit.value } : {}),
          ...(Option.isSome(cursor) ? { cursor: cursor.value } : {})
        }
      })
      if (json) return yield* Output.json(page)
      if (page.deliveries.length === 0) return yield* Console.log("No deliveries yet.")
      yield* Output.table<typeof Webhooks.Delivery.Type>([
        ["delivery", (d) => d.id],
        ["event", (d) => d.event],
        ["status", (d) => d.status],
        ["attempts", (d) => String(d.attempts)],
        ["http", (d) => Output.orDash(d.last_status_code)],
        ["error", (d) => Output.orDash(d.last_error)],
        ["created", (d) => Output.minute(d.created_at)],
        ["next attempt", (d) => Output.minute(d.next_attempt_at)]
      ], page.deliveries)
      if (page.next_cursor !== null) {
        yield* Console.log(
          `\nMore: ${yield* Invocation.command(`webhooks log ${subscription} --cursor ${page.next_cursor}`)}`
        )
      }
    }))
  })
).pipe(Command.withDescription("Show a subscription's deliveries, newest first"))

const retry = Command.make(
  "retry",
  {
    subscription: subscriptionArgument,
    delivery: Argument.String("delivery").pipe(
      Argument.withDescription("The dead-lettered delivery's id, as `webhooks log` shows it")
    )
  },
  Effect.fnUntraced(function*({ subscription, delivery }) {
    const { json } = yield* root
    yield* Connection.withSession(Effect.fnUntraced(function*({ client }) {
      const scheduled = yield* client.api.webhooks.retry({
        params: { id: subscription },
        payload: { delivery_id: delivery }
      })
      if (json) return yield* Output.json(scheduled)
      yield* Console.log(`${scheduled.delivery_id}: ${scheduled.message}`)
    }))
  })
).pipe(Command.withDescription("Deliver a dead letter again (409 unless it is dead_letter)"))

export const webhooks = Command.make("webhooks").pipe(
  Command.withDescription("Subscribe URLs to action events, follow and retry their deliveries"),
  Command.withSubcommands([create, list, log, retry])
)
