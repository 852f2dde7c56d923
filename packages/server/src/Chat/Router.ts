/**
 * Which agent of a space answers a message (spec: chat rules): an agent the
 * message mentions by name (`@Billing`, or the full name as words), else the
 * agent whose summary or knowledge best matches the message — clearly ahead of
 * the others —, else the space's primary agent (else its first one).
 * Always-on agents (room minute-takers) answer only when mentioned.
 *
 * A summary or a knowledge chunk matches when it covers more than half of the
 * message's topic words (the embedded answerer's rule, so an agent is chosen
 * for what it can answer), or when its embedding is semantically close
 * (cosine of at least 0.45: a hosted embedding model's related texts; the
 * hashing embedder rarely gets there without sharing the words anyway).
 */
import { Context, Effect, Layer } from "effect"
import type * as AiError from "effect/ai/AiError"
import * as EmbeddingModel from "effect/ai/EmbeddingModel"
import type { SqlError } from "effect/sql/SqlError"
import { cosine } from "../Ai/HashingEmbedder.ts"
import { identifierWords, normalize, terms, topicCoverage } from "../Ai/Words.ts"
import { Retrieval } from "../Knowledge/Retrieval.ts"
import type { AgentRow } from "./ChatRepo.ts"

export type RouteReason = "mention" | "match" | "primary"

export interface Route {
  readonly agent: AgentRow
  readonly reason: RouteReason
  /** The winning similarity (match), for logs and tests. */
  readonly score: number
}

/** A match covers more than this share of the message's topic weight... */
export const coverageThreshold = 0.5
/** ...or is at least this similar by embedding; and it leads the runner-up by `matchMargin`. */
export const similarityThreshold = 0.45
export const matchMargin = 0.05

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** How a message names an agent: its handle (`@name`, spaces removed) and its name as words. */
interface Mention {
  readonly handle: string
  readonly asWords: RegExp
}

/** Agents' mentions by name, compiled once per name (a bounded cache: emptied when full). */
const mentions = new Map<string, Mention | null>()
const maxMentions = 4096

/** An agent name's mention, or null for a name without letters or digits (never mentioned). */
const mentionOf = (name: string): Mention | null => {
  let mention = mentions.get(name)
  if (mention === undefined) {
    const words = identifierWords(name)
    mention = words.length === 0 ? null : {
      handle: `@${words.join("")}`,
      asWords: new RegExp(`(?<![\\p{L}\\p{N}])${words.map(escape).join("[\\s_-]+")}(?![\\p{L}\\p{N}])`, "u")
    }
    if (mentions.size >= maxMentions) mentions.clear()
    mentions.set(name, mention)
  }
  return mention
}

/** The agent a message names: `@name` (spaces optional) or the whole name as words; the longest name wins. */
export const mentionedAgent = (message: string, agents: ReadonlyArray<AgentRow>): AgentRow | undefined => {
  const text = normalize(message)
  const compact = text.replace(/\s+/g, "")
  let found: AgentRow | undefined
  for (const agent of agents) {
    const mention = mentionOf(agent.name)
    if (mention === null) continue
    if (
      (compact.includes(mention.handle) || mention.asWords.test(text)) &&
      (found === undefined || agent.name.length > found.name.length)
    ) {
      found = agent
    }
  }
  return found
}

/** The space's primary agent (else its first that is not always-on, else its first). */
export const primaryRoute = (agents: ReadonlyArray<AgentRow>): Route => {
  const candidates = agents.filter((agent) => !agent.always_on)
  const agent = candidates.find((a) => a.is_primary) ?? agents.find((a) => a.is_primary) ?? candidates[0] ?? agents[0]
  return { agent, reason: "primary", score: 0 }
}

export class Router extends Context.Service<Router, {
  /** Picks the agent among the space's agents (non-empty) for a message of the tenant. */
  readonly route: (input: {
    readonly tenantId: string
    readonly agents: ReadonlyArray<AgentRow>
    readonly message: string
  }) => Effect.Effect<Route, AiError.AiError | SqlError>
}>()("@agent-platform/server/Chat/Router") {
  /** Needs `EmbeddingModel` and `Retrieval`. */
  static readonly layer = Layer.effect(
    Router,
    Effect.gen(function*() {
      const embedder = yield* EmbeddingModel.EmbeddingModel
      const retrieval = yield* Retrieval

      const route = Effect.fn("Router.route")(function*(input: {
        readonly tenantId: string
        readonly agents: ReadonlyArray<AgentRow>
        readonly message: string
      }) {
        const mentioned = mentionedAgent(input.message, input.agents)
        if (mentioned !== undefined) return { agent: mentioned, reason: "mention" as const, score: 1 }
        const candidates = input.agents.filter((agent) => !agent.always_on)
        if (candidates.length < 2) return primaryRoute(input.agents)

        const messageTerms = terms(input.message)
        /** How well a text matches the message: its coverage, or its similarity when that is convincing. */
        const relevance = (text: string, similarity: number) => {
          const coverage = topicCoverage(messageTerms, new Set(terms(text)))
          return Math.max(
            coverage > coverageThreshold ? coverage : 0,
            similarity >= similarityThreshold ? similarity : 0
          )
        }
        const profiles = candidates.map((agent) => `${agent.name}. ${agent.summary}`)
        const { embeddings } = yield* embedder.embedMany([input.message, ...profiles])
        const message = embeddings[0].vector
        const scores = new Map(
          candidates.map((agent, i) => [agent.id, relevance(profiles[i], cosine(message, embeddings[i + 1].vector))])
        )
        const chunks = yield* retrieval.search({
          tenantId: input.tenantId,
          agentIds: candidates.map((agent) => agent.id),
          query: input.message,
          limit: 3 * candidates.length
        })
        for (const chunk of chunks) {
          scores.set(chunk.agentId, Math.max(scores.get(chunk.agentId) ?? 0, relevance(chunk.content, chunk.score)))
        }

        const ranked = candidates.map((agent) => ({ agent, score: scores.get(agent.id) ?? 0 })).sort((a, b) =>
          b.score - a.score
        )
        const [best, second] = ranked
        if (best.score > 0 && best.score - (second?.score ?? 0) >= matchMargin) {
          return { agent: best.agent, reason: "match" as const, score: best.score }
        }
        return primaryRoute(input.agents)
      })

      return Router.of({ route })
    })
  )
}
