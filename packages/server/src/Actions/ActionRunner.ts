/**
 * Direct execution of a catalog action (spec: `POST /v1/actions/{id}/execute`,
 * rules 3–6), for API keys, and later for agents acting for a user.
 *
 * The remote call runs outside any transaction; once it has returned, one
 * transaction records the execution in `action_executions`, appends it to the
 * tenant's `audit_logs` chain and queues the webhook deliveries of the
 * subscriptions that want the event — all three or none.
 */
import { Clock, Context, Effect, Layer, Result } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { createHash } from "node:crypto"
import { Actions, type Compliance, Errors } from "@agent-platform/domain"
import { AuditLog } from "../Audit/AuditLog.ts"
import { canonicalJson } from "../Audit/CanonicalJson.ts"
import { Encryption } from "../Platform/Encryption.ts"
import { WebhookDeliveriesRepo } from "../Webhooks/WebhookDeliveriesRepo.ts"
import { buildRequest, fillSecrets, type Params, paramProblems, referencedSecrets } from "./ActionRequest.ts"
import { type ExecutableAction, ActionsRepo } from "./ActionsRepo.ts"
import {
  failureStatusCode,
  type OutboundFailure,
  OutboundHttp,
  type OutboundRequest,
  type OutboundResponse
} from "./OutboundHttp.ts"
import { isUuid } from "../Platform/Ids.ts"

/** Who runs the action: an API key (maybe bound to a space) or a signed-in user. */
export type Caller =
  | { readonly kind: "key"; readonly keyId: string; readonly spaceId: string | null }
  | { readonly kind: "user"; readonly userId: string }

export interface ExecuteInput {
  /** From the caller's principal, never from the request. */
  readonly tenantId: string
  readonly caller: Caller
  readonly actionId: string
  readonly params?: Params | undefined
  /** How the execution was supervised; `autonomous` for direct key calls. */
  readonly supervision: Compliance.Supervision
  readonly chatId?: string | null | undefined
  /** The human confirmation, verbatim, and the human-in-the-loop configuration it was given under. */
  readonly confirmation?: { readonly text: string; readonly snapshot: unknown } | undefined
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
}

const succeeded = (response: OutboundResponse): Outcome => ({
  success: true,
  statusCode: response.status,
  response: parseResponse(response),
  error: null
})

const remoteRefused = (response: OutboundResponse): Outcome => {
  const error = `the remote system answered HTTP ${response.status}`
  const body = decodeText(response.body).slice(0, excerptLimit)
  return { success: false, statusCode: response.status, response: body.length > 0 ? `${error}: ${body}` : error, error }
}

const failedBeforeAnswer = (failure: OutboundFailure): Outcome => ({
  success: false,
  statusCode: failureStatusCode(failure.reason),
  response: failure.message,
  error: failure.message
})

const notCalled = (message: string): Outcome => ({ success: false, statusCode: 502, response: message, error: message })

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
          ? yield* repo.findExecutable({ tenantId: input.tenantId, actionId: input.actionId, spaceId }).pipe(Effect.orDie)
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
        const answer = yield* Effect.result(http.send({ ...request, headers: headers.success }))
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
        const outcome = yield* callRemote(input.tenantId, built.success)
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

      /** One transaction, after the remote call: the execution row, its audit entry and its webhook deliveries. */
      const record = (input: ExecuteInput, action: ExecutableAction, params: Params, outcome: Outcome, durationMs: number) =>
        Effect.gen(function*() {
          const id = crypto.randomUUID()
          const callerId = input.caller.kind === "key" ? input.caller.keyId : input.caller.userId
          const paramsDigest = createHash("sha256").update(canonicalJson(params)).digest("hex")
          const event = outcome.success ? "on_action_executed" as const : "on_action_failed" as const
          const data = {
            execution_id: id,
            action_id: action.id,
            action_name: action.name,
            success: outcome.success,
            status_code: outcome.statusCode,
            error: outcome.error,
            duration_ms: durationMs,
            supervision: input.supervision,
            chat_id: input.chatId ?? null,
            caller: { kind: input.caller.kind, id: callerId },
            params_digest: paramsDigest
          }
          yield* repo.insertExecution({
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
            supervision: input.supervision,
            chatId: input.chatId ?? null,
            confirmationText: input.confirmation?.text ?? null,
            confirmationSnapshot: input.confirmation?.snapshot ?? null
          })
          yield* audit.append("audit_logs", {
            tenantId: input.tenantId,
            event: outcome.success ? "action.executed" : "action.failed",
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
