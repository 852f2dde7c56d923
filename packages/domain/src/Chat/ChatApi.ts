import { Schema } from "effect"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { doc } from "../Doc.ts"
import { InvalidRequest, NotFound, NotImplemented } from "../Errors.ts"
import { ApiKeyAuth, RateLimitClass, RequiredScopes } from "../Security.ts"
import { ChatHistory, ChatRequest } from "./Chat.ts"

/** The chat stream as documented: `text/event-stream` of `data: <json>` events. */
export const ChatStream = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/event-stream" })).annotate({
  description:
    "Server-Sent Events. Each event is `data: <json>` followed by a blank line: first `{type: \"agent_info\", agent_id, chat_id}`, then `{text}` tokens in order, `{type: \"system_alert\", data: {action_id, action_name, success, status_code}}` per action run, `{type: \"component\", component_name, props}` widgets, `{type: \"error\", error}` if it fails after starting; last `data: [DONE]`. Comment heartbeats (`: ping`) every 15 s. The chat id is also in the `X-Chat-Id` header.",
  examples: [
    [
      "data: {\"type\":\"agent_info\",\"agent_id\":\"5f0c7a52-3c1e-4c55-9a4b-0d7f1e2a9b10\",\"agent_name\":\"Support\",\"chat_id\":\"7e1d2c3b-4a59-4687-9a1b-2c3d4e5f6a7b\"}",
      "data: {\"text\":\"Refunds are issued within 14 days \"}",
      "data: {\"text\":\"of delivery [refund-policy.md].\"}",
      "data: [DONE]",
      ""
    ].join("\n\n")
  ]
})

/** Chat over the API-key interface (`/v1/chat`). */
export class ChatApi extends HttpApiGroup.make("chat")
  .add(
    HttpApiEndpoint.post("completions", "/completions", {
      payload: ChatRequest,
      success: ChatStream,
      error: [InvalidRequest, NotFound, NotImplemented]
    })
      .annotate(RateLimitClass, "chat")
      .annotateMerge(doc(
        "Chat with an agent",
        "The router picks the agent (a mention by name, else the best match of the message against the agents' summaries and knowledge, else the space's primary agent). 404 for an unknown `chat_id` or `space`; 400 for a `chat_id` with a `space` that is not the chat's (omit `space` to continue a chat)."
      )),
    HttpApiEndpoint.get("history", "/history/:chatId", {
      params: { chatId: Schema.String },
      success: ChatHistory,
      error: [NotFound, NotImplemented]
    }).annotateMerge(doc("Read a chat's history", "Messages in order; 404 for an unknown chat."))
  )
  .annotateEndpoints(RequiredScopes, ["chat"])
  .middleware(ApiKeyAuth)
  .prefix("/v1/chat")
  .annotateMerge(OpenApi.annotations({
    title: "Chat",
    description:
      "Chat with the tenant's agents over Server-Sent Events, and chat histories, with an API key holding `chat`."
  }))
{}
