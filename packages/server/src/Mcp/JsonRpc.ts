/**
 * JSON-RPC 2.0 as MCP uses it: the envelope schemas (effect's `McpSchema`),
 * the responses this server sends, and its error codes — the standard ones
 * and two of the implementation-defined range (-32000 to -32099) for what
 * HTTP says with 401/403 and 429.
 */
import { Schema } from "effect"
import * as McpSchema from "effect/ai/McpSchema"

export type RequestId = McpSchema.RequestId

/** A message a client sends: a request, a notification, or its answer to a server request. */
export const decodeMessage = Schema.decodeUnknownResult(McpSchema.JsonRpcMessage)

export type Message = McpSchema.JsonRpcMessage

export type Request = McpSchema.JsonRpcRequest

/** A request expects a response; notifications and the client's own responses do not. */
export const isRequest = (message: Message): message is Request => "method" in message && "id" in message

export const codes = {
  parseError: McpSchema.PARSE_ERROR_CODE,
  invalidRequest: McpSchema.INVALID_REQUEST_ERROR_CODE,
  methodNotFound: McpSchema.METHOD_NOT_FOUND_ERROR_CODE,
  invalidParams: McpSchema.INVALID_PARAMS_ERROR_CODE,
  internalError: McpSchema.INTERNAL_ERROR_CODE,
  /** The API key is missing, invalid or lacks the scope (HTTP 401/403). */
  unauthorized: -32001,
  /** The key's rate limit is exhausted (HTTP 429); `data.retry_after_seconds` says when to retry. */
  rateLimited: -32029
} as const

export interface Success {
  readonly jsonrpc: "2.0"
  readonly id: RequestId
  readonly result: unknown
}

export interface Failure {
  readonly jsonrpc: "2.0"
  readonly id: RequestId | null
  readonly error: { readonly code: number; readonly message: string; readonly data?: unknown }
}

export type Response = Success | Failure

export const success = (id: RequestId, result: unknown): Success => ({ jsonrpc: "2.0", id, result })

export const failure = (id: RequestId | null, code: number, message: string, data?: unknown): Failure => ({
  jsonrpc: "2.0",
  id,
  error: data === undefined ? { code, message } : { code, message, data }
})
