/**
 * The errors of Web Push subscriptions, named for what went wrong. An unknown
 * subscription is the shared `NotFound`, a malformed one `InvalidRequest`.
 */
import { Schema } from "effect"
import { AnswerError } from "../AnswerError.ts"

const body = { error: Schema.String }

/** 409: the endpoint is another account's, and the request does not carry that subscription's keys. */
export class PushEndpointTaken extends AnswerError<PushEndpointTaken>()("PushEndpointTaken", body, {
  httpApiStatus: 409,
  description:
    "The push endpoint is registered to another account: unsubscribe it in the browser (`PushSubscription.unsubscribe()`) and subscribe again for a new endpoint, or register it with its own keys."
}) {}
