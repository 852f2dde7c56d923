/**
 * The space binding of API keys (spec "Authentication", rule 4), decided
 * here for every `/v1` endpoint: a key bound to a space reaches that space's
 * agents, their knowledge files, their chats, the actions assigned to them
 * and the space's usage, and nothing of another space. Whatever lies outside
 * answers exactly as a missing resource does (404, the same body), so a bound
 * key cannot even learn that it exists. Unbound keys and signed-in users
 * reach the whole tenant. (`GET /v1/actions` lists the whole catalog: spec
 * rule 2.)
 *
 * Decided by {@link boundSpace}; each endpoint applies it where it reads or
 * writes the resource — in the statement where it can (the agents list, the
 * knowledge files, the usage totals, the runnable actions), else on the row
 * it read (an agent's detail, a chat, a space named in a request)
 * — so a bound key costs no extra read and what lies outside is not found.
 */
import type { Principal } from "@agent-platform/domain"

/** The space the caller is confined to, or null for the whole tenant. */
export const boundSpace = (principal: Principal): string | null => (principal._tag === "Key" ? principal.spaceId : null)
