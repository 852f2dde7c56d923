import { Api, Errors } from "@agent-platform/domain"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as IpNetwork from "effect/net/IpNetwork"
import { AuditLog } from "../Audit/AuditLog.ts"
import { clientInfo, currentUser } from "../Auth/CurrentUser.ts"
import { orDieOnSql } from "../Platform/Defects.ts"
import { allows, IpAllowlist, type IpRuleRow, parseCidr } from "./IpAllowlist.ts"
import { PasswordPolicies } from "./PasswordPolicies.ts"

const toRule = (row: IpRuleRow) => ({ ...row, created_at: row.created_at.toISOString() })

export const SecurityPoliciesHttp = HttpApiBuilder.group(Api, "security", (handlers) =>
  Effect.gen(function*() {
    const allowlist = yield* IpAllowlist
    const policies = yield* PasswordPolicies
    const audit = yield* AuditLog
    return handlers
      .handle("listIpRules", () =>
        Effect.gen(function*() {
          const actor = yield* currentUser
          return { rules: (yield* allowlist.list(actor.tenantId)).map(toRule) }
        }).pipe(orDieOnSql))
      .handle("createIpRule", ({ payload }) =>
        Effect.gen(function*() {
          const actor = yield* currentUser
          const network = parseCidr(payload.cidr)
          if (network === undefined) {
            return yield* new Errors.InvalidRequest({
              error: `cidr: ${payload.cidr} is not an IPv4 or IPv6 network, e.g. 203.0.113.0/24 or 2001:db8::/32`
            })
          }
          const cidr = IpNetwork.format(network)
          const client = yield* clientInfo
          return yield* allowlist.changing(actor.tenantId, (existing) =>
            Effect.gen(function*() {
              // Adding the first rule (or one more) must not shut out the administrator adding it.
              if (payload.force !== true && !allows([...existing.map((rule) => rule.cidr), cidr], client.ip)) {
                return yield* new Errors.Conflict({
                  error: `This rule set would lock out your current IP ${
                    client.ipText ?? "(unknown)"
                  }: add a rule that covers it first, or send force: true.`
                })
              }
              const row = yield* allowlist.add(actor.tenantId, {
                cidr,
                description: payload.description ?? null,
                createdBy: actor.userId
              })
              if (row === undefined) {
                return yield* new Errors.Conflict({ error: `${cidr} is already in the allowlist.` })
              }
              yield* audit.append("admin_audit_log", {
                tenantId: actor.tenantId,
                event: "ip_allowlist.rule_added",
                actor: `user:${actor.userId}`,
                target: `ip_rule:${row.id}`,
                data: { cidr, forced: payload.force === true },
                ip: client.ipText
              })
              return toRule(row)
            }))
        }).pipe(orDieOnSql))
      .handle("deleteIpRule", ({ params, query }) =>
        Effect.gen(function*() {
          const actor = yield* currentUser
          const client = yield* clientInfo
          return yield* allowlist.changing(actor.tenantId, (existing) =>
            Effect.gen(function*() {
              const target = existing.find((rule) => rule.id === params.id)
              if (target === undefined) {
                return yield* new Errors.NotFound({ error: `Allowlist rule ${params.id} not found.` })
              }
              // The same guard as adding: removing the rule that lets the administrator in must not shut them out.
              const left = existing.filter((rule) => rule.id !== target.id).map((rule) => rule.cidr)
              if (query.force !== "true" && !allows(left, client.ip)) {
                return yield* new Errors.Conflict({
                  error: `Removing ${target.cidr} would lock out your current IP ${
                    client.ipText ?? "(unknown)"
                  }: add a rule that covers it first, or send ?force=true.`
                })
              }
              const row = yield* allowlist.remove(actor.tenantId, params.id)
              if (row === undefined) {
                return yield* new Errors.NotFound({ error: `Allowlist rule ${params.id} not found.` })
              }
              yield* audit.append("admin_audit_log", {
                tenantId: actor.tenantId,
                event: "ip_allowlist.rule_removed",
                actor: `user:${actor.userId}`,
                target: `ip_rule:${row.id}`,
                data: { cidr: row.cidr, forced: query.force === "true" },
                ip: client.ipText
              })
              return { success: true as const, message: `Removed ${row.cidr} from the allowlist.` }
            }))
        }).pipe(orDieOnSql))
      .handle(
        "getPasswordPolicy",
        () => Effect.flatMap(currentUser, (actor) => policies.get(actor.tenantId)).pipe(orDieOnSql)
      )
      .handle("updatePasswordPolicy", ({ payload }) =>
        Effect.gen(function*() {
          const actor = yield* currentUser
          const policy = yield* policies.put(actor.tenantId, payload)
          yield* audit.append("admin_audit_log", {
            tenantId: actor.tenantId,
            event: "password_policy.updated",
            actor: `user:${actor.userId}`,
            target: `tenant:${actor.tenantId}`,
            data: { ...payload }
          })
          return policy
        }).pipe(orDieOnSql))
  }))
