/**
 * The MCP server of the action catalog: `initialize`, `ping`, `tools/list`
 * and `tools/call` for one API key (MCP 2025-03-26, also answering as
 * 2025-06-18 and 2025-11-25, whose tool semantics are the same).
 *
 * Why not effect's `McpServer`: its tools are one process-wide registry built
 * from a static `Toolkit` (tools can be added, never removed, and names are
 * global), while here every tenant — and every space-bound key — has its own
 * tools, changing whenever an administrator edits the catalog on any
 * replica. Listing the caller's tools from the database on each request is
 * both correct and simpler than keeping a registry of every tenant's tools in
 * sync, so this module implements the three methods itself over effect's
 * `McpSchema` envelopes.
 *
 * Tools follow the rules of `POST /v1/actions/{id}/execute`, through the same
 * `ActionRunner`: a space-bound key sees and runs only the actions of its
 * space's agents, an unknown tool (or one outside the space) is the
 * JSON-RPC error -32602 "Unknown tool" (MCP spec, "Tools: error handling"),
 * never run; a remote failure is a result with `isError: true`
 * carrying the ActionResponse (its `status_code` and failure message), and
 * every call is recorded with channel `mcp` and triggered by the key: supervision
 * `autonomous` (or `shadow` for an action in shadow mode, which is not called).
 */
import { type Actions, type Errors, type KeyPrincipal } from "@agent-platform/domain"
import { Context, Effect, Layer, Schema } from "effect"
import { boundSpace } from "../Access/SpaceBinding.ts"
import { ActionCatalog } from "../Actions/ActionCatalog.ts"
import { ActionRunner } from "../Actions/ActionRunner.ts"
import { ServiceVersion } from "../Platform/ServiceVersion.ts"
import * as JsonRpc from "./JsonRpc.ts"
import { actionTools, resolveTool } from "./McpTools.ts"

/** The protocol revisions this server speaks, oldest first. */
export const protocolVersions = ["2025-03-26", "2025-06-18", "2025-11-25"] as const
export type ProtocolVersion = typeof protocolVersions[number]

/** The revision of requests that do not say (spec 2025-06-18: "assume 2025-03-26"). */
export const defaultProtocolVersion: ProtocolVersion = "2025-03-26"

export const isProtocolVersion = (value: string): value is ProtocolVersion =>
  (protocolVersions as ReadonlyArray<string>).includes(value)

/** The client's revision when this server speaks it, else the latest this server speaks (spec: lifecycle). */
const negotiate = (requested: string): ProtocolVersion =>
  isProtocolVersion(requested) ? requested : protocolVersions[protocolVersions.length - 1]

/** Tool results may carry `structuredContent` from 2025-06-18 on. */
const hasStructuredContent = (version: ProtocolVersion) => version !== "2025-03-26"

/** From 2025-11-25 on, invalid tool arguments are a tool error the model can correct, not a protocol error. */
const argumentErrorsAreResults = (version: ProtocolVersion) => version === "2025-11-25"

const InitializeParams = Schema.Struct({ protocolVersion: Schema.String })

const CallToolParams = Schema.Struct({
  name: Schema.String,
  arguments: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
})

const instructions =
  "Each tool runs one action of your organization's catalog against its system and returns the action's response as JSON. " +
  "A result with isError true carries the failure (status_code and message)."

export interface McpCall {
  readonly key: KeyPrincipal
  readonly request: JsonRpc.Request
  /** The revision the client negotiated (its MCP-Protocol-Version header), or the default. */
  readonly version: ProtocolVersion
}

export class ActionsMcp extends Context.Service<ActionsMcp, {
  /** Answers one JSON-RPC request; every outcome is a response (protocol errors included). */
  readonly handle: (call: McpCall) => Effect.Effect<JsonRpc.Response>
}>()("@agent-platform/server/Mcp/ActionsMcp") {
  static readonly layer = Layer.effect(
    ActionsMcp,
    Effect.gen(function*() {
      const catalog = yield* ActionCatalog
      const runner = yield* ActionRunner

      const toolsOf = (key: KeyPrincipal) => Effect.map(catalog.runnable(key.tenantId, boundSpace(key)), actionTools)

      const initialize = (id: JsonRpc.RequestId, params: unknown) =>
        Effect.gen(function*() {
          const decoded = Schema.decodeUnknownOption(InitializeParams)(params)
          if (decoded._tag === "None") {
            return JsonRpc.failure(
              id,
              JsonRpc.codes.invalidParams,
              "initialize needs params.protocolVersion (a string)"
            )
          }
          return JsonRpc.success(id, {
            protocolVersion: negotiate(decoded.value.protocolVersion),
            capabilities: { tools: { listChanged: false } },
            serverInfo: { name: "agent-platform-actions", version: yield* ServiceVersion },
            instructions
          })
        })

      const listTools = (id: JsonRpc.RequestId, key: KeyPrincipal) =>
        Effect.map(toolsOf(key), (tools) => JsonRpc.success(id, { tools: tools.map((t) => t.tool) }))

      const toolResult = (body: Actions.ActionResponse, isError: boolean, version: ProtocolVersion) => ({
        content: [{ type: "text", text: JSON.stringify(body) }],
        ...(hasStructuredContent(version) ? { structuredContent: body } : {}),
        isError
      })

      const callTool = (id: JsonRpc.RequestId, params: unknown, key: KeyPrincipal, version: ProtocolVersion) =>
        Effect.gen(function*() {
          const decoded = Schema.decodeUnknownOption(CallToolParams)(params)
          if (decoded._tag === "None") {
            return JsonRpc.failure(
              id,
              JsonRpc.codes.invalidParams,
              "tools/call needs params.name (a string) and params.arguments (an object)"
            )
          }
          const { name } = decoded.value
          const tool = resolveTool(yield* toolsOf(key), name)
          // MCP spec: an unknown tool is a protocol error (-32602). Only listed tools run, so an action
          // outside the key's space and a missing one look the same (spec rule 3).
          if (tool === undefined) return JsonRpc.failure(id, JsonRpc.codes.invalidParams, `Unknown tool: ${name}`)
          const outcome = yield* runner.execute({
            tenantId: key.tenantId,
            caller: { kind: "key", keyId: key.keyId, spaceId: boundSpace(key) },
            actionId: tool.actionId,
            params: decoded.value.arguments ?? {},
            trigger: { type: "key", keyId: key.keyId, channel: "mcp" }
          }).pipe(Effect.result)
          if (outcome._tag === "Success") return JsonRpc.success(id, toolResult(outcome.success, false, version))
          const error: Errors.NotFound | Errors.InvalidRequest | Actions.ActionFailed = outcome.failure
          switch (error._tag) {
            case "ActionFailed": {
              const { _tag, ...body } = error
              return JsonRpc.success(id, toolResult(body, true, version))
            }
            case "NotFound":
              // The action was deleted or moved out of the space between listing and running it.
              return JsonRpc.failure(id, JsonRpc.codes.invalidParams, `Unknown tool: ${name}`)
            case "InvalidRequest":
              return argumentErrorsAreResults(version)
                ? JsonRpc.success(id, {
                  content: [{ type: "text", text: `Invalid arguments: ${error.error}` }],
                  isError: true
                })
                : JsonRpc.failure(id, JsonRpc.codes.invalidParams, `Invalid arguments for tool ${name}: ${error.error}`)
          }
        })

      const handle = Effect.fn("ActionsMcp.handle")(function*({ key, request, version }: McpCall) {
        const params = request.params
        switch (request.method) {
          case "initialize":
            return yield* initialize(request.id, params)
          case "ping":
            return JsonRpc.success(request.id, {})
          case "tools/list":
            return yield* listTools(request.id, key)
          case "tools/call":
            return yield* callTool(request.id, params, key, version)
          default:
            return JsonRpc.failure(request.id, JsonRpc.codes.methodNotFound, `Method not found: ${request.method}`)
        }
      })

      return ActionsMcp.of({ handle })
    })
  )
}
