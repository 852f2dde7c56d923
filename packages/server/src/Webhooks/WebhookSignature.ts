/**
 * The signature of a webhook delivery, as documented to receivers in the
 * API description (`signingDescription` of the domain's WebhooksApi):
 * `X-Service-Signature: sha256=<hex>` where hex is
 * HMAC-SHA256(secret, `<X-Service-Timestamp>.<raw body>`). Signing the
 * timestamp with the body lets receivers reject replays of old deliveries.
 */
import { createHmac } from "node:crypto"

/** The value of the `X-Service-Signature` header. */
export const signatureHeader = (secret: string, timestamp: number, body: string): string =>
  `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`
