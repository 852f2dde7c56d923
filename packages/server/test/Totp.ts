/** RFC 6238 TOTP computed independently of the server (node:crypto only), for tests. */
import { createHmac } from "node:crypto"

const base32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

const decodeBase32 = (input: string): Buffer => {
  let bits = 0
  let value = 0
  const out: Array<number> = []
  for (const char of input.replace(/=+$/, "").toUpperCase()) {
    const index = base32.indexOf(char)
    if (index < 0) throw new Error(`not base32: ${char}`)
    value = (value << 5) | index
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff)
      bits -= 8
    }
  }
  return Buffer.from(out)
}

/** The 6-digit code of `secret` for the 30-second step `offset` steps from now. */
export const totp = (secret: string, offset = 0, now = Date.now()): string => {
  const counter = Math.floor(now / 1000 / 30) + offset
  const message = Buffer.alloc(8)
  message.writeBigUInt64BE(BigInt(counter))
  const digest = createHmac("sha1", decodeBase32(secret)).update(message).digest()
  const start = digest[digest.length - 1] & 0x0f
  const code = (digest.readUInt32BE(start) & 0x7fffffff) % 1_000_000
  return code.toString().padStart(6, "0")
}
