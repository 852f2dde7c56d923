/**
 * Direct execution of a catalog action (spec: `POST /v1/actions/{id}/execute`,
 * rules 3–6), for API keys, and later for agents acting for a user.
 *
 * The remote call runs outside any transaction; once it has returned, one
 * transaction records the execution in `action_executions`, appends it to the
 * tenant's `audit_logs` chain and queues the webhook deliveries of the
 * subscriptions that want the event — all three or none.
 *
 * Every record carries its provenance: who triggered it (a key, a user, or an
 * agent in a chat or room and whose message it acted on, with their names
 * then), who confirmed it, the human-in-the-loop configuration in force and
 * the supervision class derived from them (`supervisionOf`). In shadow mode
 * the resolved request is recorded instead of sent.
 */
import { type ActionAdmin, Actions, type Compliance, Errors } from "@agent-platform/domain"
import { Clock, Context, Effect, Layer, Result } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { createHash } from "node:crypto"
import { AuditLog } from "../Audit/AuditLog.ts"
import { canonicalJson } from "../Audit/CanonicalJson.ts"
import { Encryption } from "../Platform/Encryption.ts"
import { isUuid } from "../Platform/Ids.ts"
import { WebhookDeliveriesRepo } from "../Webhooks/WebhookDeliveriesRepo.ts"
import { buildRequest, fillSecrets, paramProblems, type Params, referencedSecrets } from "./ActionRequest.ts"
import {
  ActionsRepo,
  type ExecutableAction,
  type ExecutionRecord,
  type NamedParty,
  type PartyNames
} from "./ActionsRepo.ts"
import {
  failureStatusCode,
  type OutboundFailure,
  OutboundHttp,
  type OutboundRequest,
  type OutboundResponse
} from "./OutboundHttp.ts"

/** Whose authority the action runs under: an API key (maybe bound to a space) or a signed-in user. */
export type Caller =
  | { readonly kind: "key"; readonly keyId: string; readonly spaceId: string | null }
  | { readonly kind: "user"; readonly userId: string }

/** Whose message made an agent act: a signed-in user, or the API key a chat runs over (a widget's visitor). */
export type Author =
  | { readonly type: "user"; readonly userId: string }
  | { readonly type: "key"; readonly keyId: string }

/**
 * Who set the execution off, as provenance records it (names are looked up
 * when it is recorded): a key calling directly or through MCP, a user
 * running it themselves, or an agent in a chat or room — acting on
 * `onBehalfOf`'s message, or on its own (null).
 */
export type Trigger =
  | { readonly type: "key"; readonly keyId: string; readonly channel: "direct" | "mcp" }
  | { readonly type: "user"; readonly userId: string; readonly channel: "direct" }
  | {
    readonly type: "agent"
    readonly agentId: string
    readonly channel: "chat" | "room"
    readonly onBehalfOf: Author | null
  }

/** A human's confirmation in chat: who gave it, verbatim, and what they were asked. */
export interface Confirmation {
  readonly by: Author
  readonly text: string
  readonly asked?: string | null | undefined
  readonly at: Date
}

export interface ExecuteInput {
  /** From the caller's principal, never from the request. */
  readonly tenantId: string
  readonly caller: Caller
  readonly actionId: string
  readonly params?: Params | undefined
  readonly trigger: Trigger
  readonly chatId?: string | null | undefined
  /** Given when a human confirmed the execution in chat. */
  readonly confirmation?: Confirmation | undefined
}

/**
 * The supervision class, decided here only: shadow mode first (nothing was
 * sent), then a human's confirmation, then whether a chat or room message —
 * a person's turn in a conversation — set the agent off; everything else
 * (direct and MCP calls with a key, an agent on its own) is autonomous.
 */
export const supervisionOf = (
  mode: ActionAdmin.HitlMode,
  trigger: Trigger,
  confirmation: Confirmation | undefined
): Compliance.Supervision => {
  if (mode === "shadow") return "shadow"
  if (confirmation !== undefined) return "human_confirmed"
  if (trigger.type === "user" || (trigger.type === "agent" && trigger.onBehalfOf !== null)) {
    return "human_triggered_auto"
  }
  return "autonomous"
}

export type ExecuteError = Errors.NotFound | Errors.InvalidRequest | Actions.ActionFailed

const excerptLimit = 2000

const decodeText = (body: Uint8Array) => new TextDecoder().decode(body)

/** The remote's answer as the caller sees it: parsed JSON when it parses, else text; null when empty. */
const parseResponse = (response: OutboundResponse): unknown => {
  const text = decodeText(response.body)
  if (text.length === 0) return null
  if (response.contentType?.toLowerCase().includes("json") === true) {
    try {
      return JSON.parse(text)
    } catch {
      return text
    }
  }
  return text
}

/** How one execution ended, before it is recorded. */
interface Outcome {
  readonly success: boolean
  readonly statusCode: number
  readonly response: unknown
  readonly error: string | null
  /** Whether the request went out (false in shadow mode, or when it could not be built). */
  readonly remoteCalled: boolean
  /** In shadow mode: the request that would have been sent. */
  readonly shadowRequest?: unknown
}

const succeeded = (response: OutboundResponse): Outcome => ({
  success: true,
  statusCode: response.status,
  response: parseResponse(response),
  error: null,
  remoteCalled: true
})

/** The status code of a shadow execution: accepted and recorded, not performed. */
export const shadowStatusCode = 202

/** The resolved request, as recorded in shadow mode: header values may hold credentials, so only their names. */
const shadowView = (request: OutboundRequest) => ({
  method: request.method,
  url: request.url,
  header_names: Object.keys(request.headers ?? {}),
  body: request.body === undefined
    ? null
    : "text" in request.body
    ? parseJsonOrText(request.body.text)
    : `<${request.body.bytes.byteLength} bytes>`
})

const parseJsonOrText = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** Shadow mode: nothing is sent, and the answer says so. */
const shadowed = (action: ExecutableAction, request: OutboundRequest): Outcome => {
  const resolved = shadowView(request)
  return {
    success: true,
    statusCode: shadowStatusCode,
    response: {
      shadow: true,
      message:
        `Shadow mode: ${action.name} was not run. The request was recorded for review and not sent to the remote system.`,
      request: resolved
    },
    error: null,
    remoteCalled: false,
    shadowRequest: resolved
  }
}

const remoteRefused = (response: OutboundResponse): Outcome => {
  const error = `the remote system answered HTTP ${response.status}`
  const body = decodeText(response.body).slice(0, excerptLimit)
  return {
    success: false,
    statusCode: response.status,
    response: body.length > 0 ? `${error}: ${body}` : error,
    error,
    remoteCalled: true
  }
}

const failedBeforeAnswer = (failure: OutboundFailure): Outcome => ({
  success: false,
  statusCode: failureStatusCode(failure.reason),
  response: failure.message,
  error: failure.message,
  remoteCalled: true
})

const notCalled = (message: string): Outcome => ({
  success: false,
  statusCode: 502,
  response: message,
  error: message,
  remoteCalled: false
})

export class ActionRunner extends Context.Service<ActionRunner, {
  /**
   * Runs the action for the caller. Succeeds with the 200 ActionResponse;
   * fails with NotFound (space-bound key, action outside its space or
   * missing), InvalidRequest (params), or ActionFailed (502: remote failure,
   * or a missing action for a caller without a space).
   */
  readonly execute: (input: ExecuteInput) => Effect.Effect<Actions.ActionResponse, ExecuteError>
}>()("@agent-platform/server/Actions/ActionRunner") {
  static readonly layer = Layer.effect(
    ActionRunner,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* ActionsRepo
      const deliveries = yield* WebhookDeliveriesRepo
      const audit = yield* AuditLog
      const encryption = yield* Encryption
      const http = yield* OutboundHttp

      const spaceOf = (caller: Caller) => (caller.kind === "key" ? caller.spaceId : null)

      /** Spec rules 3–4: the same 404 for "outside the space" and "missing"; 502 without a space. */
      const missing = (input: ExecuteInput): ExecuteError =>
        spaceOf(input.caller) !== null
          ? new Errors.NotFound({ error: "action not found" })
          : new Actions.ActionFailed({
            success: false,
            status_code: 502,
            action_id: input.actionId,
            action_name: "",
            response: `action ${input.actionId} not found`,
            error: "action not found"
          })

      const findAction = Effect.fnUntraced(function*(input: ExecuteInput) {
        const spaceId = spaceOf(input.caller)
        // An id that is not a UUID names no action; it must not reach a uuid column as an SQL error.
        const action = isUuid(input.actionId) && (spaceId === null || isUuid(spaceId))
          ? yield* repo.findExecutable({ tenantId: input.tenantId, actionId: input.actionId, spaceId }).pipe(
            Effect.orDie
          )
          : undefined
        if (action === undefined || !action.in_space) return yield* Effect.fail(missing(input))
        return action
      })

      const decryptSecrets = (tenantId: string, names: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const ciphertexts = yield* repo.secretCiphertexts(tenantId, names).pipe(Effect.orDie)
          const secrets = new Map<string, string>()
          for (const [name, ciphertext] of ciphertexts) secrets.set(name, yield* encryption.decrypt(ciphertext))
          return secrets
        })

      /** The remote call with the tenant's secrets in its headers; every way it can end is an Outcome. */
      const callRemote = Effect.fnUntraced(function*(tenantId: string, request: OutboundRequest) {
        const templates = request.headers ?? {}
        const secrets = yield* Effect.result(decryptSecrets(tenantId, referencedSecrets(templates)))
        if (Result.isFailure(secrets)) return notCalled(secrets.failure.message)
        const headers = fillSecrets(templates, secrets.success)
        if (Result.isFailure(headers)) return notCalled(headers.failure)
        const answer = yield* Effect.result(http.send({ ...request, headers: headers.success }, { tenantId }))
        if (Result.isFailure(answer)) return failedBeforeAnswer(answer.failure)
        const { status } = answer.success
        return status >= 200 && status < 300 ? succeeded(answer.success) : remoteRefused(answer.success)
      })

      const execute = Effect.fn("ActionRunner.execute")(function*(input: ExecuteInput) {
        const action = yield* findAction(input)
        const params = input.params ?? {}
        const problems = paramProblems(action.parameters, params)
        if (problems.length > 0) return yield* new Errors.InvalidRequest({ error: problems.join("; ") })
        const built = buildRequest(action, params)
        if (Result.isFailure(built)) return yield* new Errors.InvalidRequest({ error: built.failure.join("; ") })

        const startedAt = yield* Clock.currentTimeMillis
        const outcome = action.hitl_mode === "shadow"
          ? shadowed(action, built.success)
          : yield* callRemote(input.tenantId, built.success)
        const durationMs = Math.max(0, (yield* Clock.currentTimeMillis) - startedAt)

        yield* record(input, action, params, outcome, durationMs)

        const body = {
          success: outcome.success,
          status_code: outcome.statusCode,
          action_id: action.id,
          action_name: action.name,
          response: outcome.response,
          error: outcome.error
        }
        return outcome.success ? body : yield* new Actions.ActionFailed(body)
      })

      /** The record's parties with their names (as they are now, kept with the record). */
      const partiesOf = (input: ExecuteInput, names: PartyNames) => {
        const author = (who: Author): NamedParty =>
          who.type === "user"
            ? { type: "user", id: who.userId, name: names.users.get(who.userId) ?? null }
            : { type: "key", id: who.keyId, name: names.keys.get(who.keyId)?.name ?? null }
        const trigger = input.trigger
        const triggeredBy: NamedParty = trigger.type === "agent"
          ? { type: "agent", id: trigger.agentId, name: names.agents.get(trigger.agentId)?.name ?? null }
          : author(
            trigger.type === "user" ? { type: "user", userId: trigger.userId } : { type: "key", keyId: trigger.keyId }
          )
        const onBehalfOf = trigger.type === "agent" && trigger.onBehalfOf !== null ? author(trigger.onBehalfOf) : null
        const confirmation = input.confirmation === undefined ? null : (() => {
          const by = author(input.confirmation.by)
          return {
            userId: by.type === "user" ? by.id : null,
            keyId: by.type === "key" ? by.id : null,
            name: by.name,
            text: input.confirmation.text,
            asked: input.confirmation.asked ?? null,
            at: input.confirmation.at
          }
        })()
        const agentId = trigger.type === "agent" ? trigger.agentId : null
        const keyId = input.caller.kind === "key" ? input.caller.keyId : null
        const spaceId = (agentId === null ? undefined : names.agents.get(agentId)?.spaceId) ??
          (keyId === null ? null : names.keys.get(keyId)?.spaceId ?? null)
        return { triggeredBy, onBehalfOf, confirmation, agentId, spaceId }
      }

      const namesOf = (input: ExecuteInput) => {
        const authors = [
          ...(input.trigger.type === "agent" && input.trigger.onBehalfOf !== null ? [input.trigger.onBehalfOf] : []),
          ...(input.confirmation === undefined ? [] : [input.confirmation.by])
        ]
        return repo.partyNames(input.tenantId, {
          users: [
            ...(input.trigger.type === "user" ? [input.trigger.userId] : []),
            ...authors.flatMap((a) => (a.type === "user" ? [a.userId] : []))
          ],
          keys: [
            ...(input.trigger.type === "key" ? [input.trigger.keyId] : []),
            ...(input.caller.kind === "key" ? [input.caller.keyId] : []),
            ...authors.flatMap((a) => (a.type === "key" ? [a.keyId] : []))
          ],
          agents: input.trigger.type === "agent" ? [input.trigger.agentId] : []
        })
      }

      /** One transaction, after the remote call: the execution row, its audit entry and its webhook deliveries. */
      const record = (
        input: ExecuteInput,
        action: ExecutableAction,
        params: Params,
        outcome: Outcome,
        durationMs: number
      ) =>
        Effect.gen(function*() {
          const id = crypto.randomUUID()
          const callerId = input.caller.kind === "key" ? input.caller.keyId : input.caller.userId
          const paramsDigest = createHash("sha256").update(canonicalJson(params)).digest("hex")
          const event = outcome.success ? "on_action_executed" as const : "on_action_failed" as const
          const supervision = supervisionOf(action.hitl_mode, input.trigger, input.confirmation)
          const parties = partiesOf(input, yield* namesOf(input))
          const execution: ExecutionRecord = {
            id,
            tenantId: input.tenantId,
            actionId: action.id,
            actionName: action.name,
            callerKind: input.caller.kind,
            callerId,
            paramsDigest,
            statusCode: outcome.statusCode,
            success: outcome.success,
            error: outcome.error,
            durationMs,
            supervision,
            channel: input.trigger.channel,
            chatId: input.chatId ?? null,
            ...parties,
            hitlVersion: action.hitl_version,
            hitlMode: action.hitl_mode,
            remoteCalled: outcome.remoteCalled,
            shadowRequest: outcome.shadowRequest ?? null
          }
          const data = {
            execution_id: id,
            action_id: action.id,
            action_name: action.name,
            success: outcome.success,
            status_code: outcome.statusCode,
            error: outcome.error,
            duration_ms: durationMs,
            supervision,
            channel: execution.channel,
            chat_id: execution.chatId,
            caller: { kind: input.caller.kind, id: callerId },
            triggered_by: parties.triggeredBy,
            on_behalf_of: parties.onBehalfOf,
            confirmed: parties.confirmation !== null,
            hitl: { version: action.hitl_version, mode: action.hitl_mode },
            remote_called: outcome.remoteCalled,
            params_digest: paramsDigest
          }
          yield* repo.insertExecution(execution)
          yield* audit.append("audit_logs", {
            tenantId: input.tenantId,
            event: supervision === "shadow" ? "action.shadowed" : outcome.success ? "action.executed" : "action.failed",
            actor: `${input.caller.kind}:${callerId}`,
            target: `action:${action.id}`,
            data
          })
          yield* deliveries.enqueue({
            id: crypto.randomUUID(),
            event,
            created_at: new Date().toISOString(),
            tenant_id: input.tenantId,
            data
          })
        }).pipe(
          sql.withTransaction,
          // The remote call has happened: recording it must not be cut short by the caller going away.
          Effect.uninterruptible,
          Effect.orDie
        )

      return ActionRunner.of({ execute })
    })
  ).pipe(
    Layer.provide(Layer.mergeAll(ActionsRepo.layer, WebhookDeliveriesRepo.layer, OutboundHttp.layer))
  )
}
