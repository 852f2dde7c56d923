import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import {
  EnterpriseUrn,
  filter,
  isScimError,
  ListUrn,
  scimClient,
  SearchRequestUrn,
  unique,
  UserUrn
} from "./ScimClient.ts"
import { createKey, http, layer as testServer, serverSuite } from "./TestServer.ts"

/** Four users with distinct attributes, their userNames sharing a prefix no other test uses. */
const population = Effect.gen(function*() {
  const scim = yield* scimClient()
  const p = `f${unique()}`
  const people = [
    {
      userName: `${p}-alice@example.com`,
      name: { givenName: "Alice", familyName: "Smith" },
      title: "Engineer",
      externalId: "ext-A1",
      emails: [{ value: `${p}-alice@example.com`, type: "work", primary: true }, {
        value: `${p}-alice@home.example.org`,
        type: "home"
      }],
      [EnterpriseUrn]: { department: "R&D", employeeNumber: "100" }
    },
    {
      userName: `${p}-bob@example.com`,
      name: { givenName: "Bob", familyName: "Jones" },
      title: "Manager",
      externalId: "ext-b2",
      active: false,
      emails: [{ value: `${p}-bob@example.com`, type: "work", primary: true }],
      [EnterpriseUrn]: { department: "Sales" }
    },
    {
      userName: `${p}-carol@example.com`,
      name: { givenName: "Carol", familyName: "Smith" },
      externalId: "EXT-A1",
      emails: [{ value: `${p}-carol@example.com`, type: "work", primary: true }, {
        value: `${p}-carol%_@example.com`,
        type: "other"
      }],
      [EnterpriseUrn]: { department: "r&d" }
    },
    {
      userName: `${p}-o'neil@example.com`,
      name: { givenName: "Dara", familyName: "O'Neil" },
      emails: [{ value: `${p}-o'neil@example.com`, type: "work", primary: true }]
    }
  ]
  const ids: Record<string, string> = {}
  for (const person of people) {
    const created = yield* scim.post("/Users", { schemas: [UserUrn, EnterpriseUrn], ...person })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    ids[created.body.id] = person.userName.slice(p.length + 1).split("@")[0]
  }
  /** The first names of the users a filter (scoped to the population) finds, sorted. */
  const find = (expression: string) =>
    Effect.gen(function*() {
      const result = yield* scim.get(`/Users${filter(`(${expression}) and userName sw "${p}"`)}&count=1000`)
      assert.strictEqual(result.status, 200, `${expression}: ${JSON.stringify(result.body)}`)
      return (result.body.Resources as Array<{ id: string }>).map((resource) => ids[resource.id]).sort()
    })
  return { scim, p, find }
})

layer(testServer(), serverSuite)("SCIM filters (RFC 7644 §3.4.2.2)", (it) => {
  it.effect("comparison operators: eq ne co sw ew pr gt ge lt le, userName case-insensitive, externalId case-exact", () =>
    Effect.gen(function*() {
      const { p, find } = yield* population
      assert.deepStrictEqual(yield* find(`userName eq "${p.toUpperCase()}-ALICE@EXAMPLE.COM"`), ["alice"])
      assert.deepStrictEqual(yield* find(`userName ne "${p}-alice@example.com"`), ["bob", "carol", "o'neil"])
      assert.deepStrictEqual(yield* find(`name.familyName co "MIT"`), ["alice", "carol"])
      assert.deepStrictEqual(yield* find(`name.givenName sw "ca"`), ["carol"])
      assert.deepStrictEqual(yield* find(`userName ew "BOB@example.com"`), ["bob"])
      assert.deepStrictEqual(yield* find(`title pr`), ["alice", "bob"])
      assert.deepStrictEqual(yield* find(`userName gt "${p}-c"`), ["carol", "o'neil"])
      assert.deepStrictEqual(yield* find(`userName ge "${p}-carol@example.com"`), ["carol", "o'neil"])
      assert.deepStrictEqual(yield* find(`userName lt "${p}-b"`), ["alice"])
      assert.deepStrictEqual(yield* find(`userName le "${p}-bob@example.com"`), ["alice", "bob"])
      assert.deepStrictEqual(yield* find(`externalId eq "ext-A1"`), ["alice"])
      assert.deepStrictEqual(yield* find(`externalId eq "EXT-A1"`), ["carol"])
      assert.deepStrictEqual(yield* find(`active eq false`), ["bob"])
      assert.deepStrictEqual(yield* find(`active eq "True"`), ["alice", "carol", "o'neil"])
      assert.deepStrictEqual(yield* find(`meta.created gt "2000-01-01T00:00:00Z"`), ["alice", "bob", "carol", "o'neil"])
      assert.deepStrictEqual(yield* find(`meta.lastModified lt "2000-01-01T00:00:00Z"`), [])
      assert.deepStrictEqual(
        yield* find(`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "R&D"`),
        ["alice", "carol"]
      )
      assert.deepStrictEqual(yield* find(`urn:ietf:params:scim:schemas:core:2.0:User:name.givenName eq "bob"`), ["bob"])
      assert.deepStrictEqual(yield* find(`USERNAME Eq "${p}-bob@example.com"`), ["bob"])
    }))

  it.effect("logical operators, grouping and precedence: and binds tighter than or; not never turns unknown into a match", () =>
    Effect.gen(function*() {
      const { find } = yield* population
      assert.deepStrictEqual(yield* find(`title eq "Engineer" or title eq "Manager"`), ["alice", "bob"])
      assert.deepStrictEqual(yield* find(`title eq "Engineer" or title eq "Manager" and active eq true`), ["alice"])
      assert.deepStrictEqual(yield* find(`(title eq "Engineer" or title eq "Manager") and active eq false`), ["bob"])
      assert.deepStrictEqual(yield* find(`not (title pr)`), ["carol", "o'neil"])
      assert.deepStrictEqual(yield* find(`not (title eq "Engineer")`), ["bob", "carol", "o'neil"])
      assert.deepStrictEqual(yield* find(`title ne "Engineer"`), ["bob", "carol", "o'neil"])
      assert.deepStrictEqual(yield* find(`not (name.familyName eq "Smith" or active eq false)`), ["o'neil"])
    }))

  it.effect("multi-valued attributes and value paths, including emails[type eq \"work\"].value", () =>
    Effect.gen(function*() {
      const { p, find } = yield* population
      assert.deepStrictEqual(yield* find(`emails[type eq "home" and value co "home.example"]`), ["alice"])
      assert.deepStrictEqual(yield* find(`emails[type eq "work"].value eq "${p}-bob@example.com"`), ["bob"])
      // Both conditions must hold for the same email.
      assert.deepStrictEqual(yield* find(`emails[type eq "home"].value eq "${p}-bob@example.com"`), [])
      assert.deepStrictEqual(yield* find(`emails.value eq "${p}-alice@home.example.org"`), ["alice"])
      assert.deepStrictEqual(yield* find(`emails co "home.example"`), ["alice"])
      assert.deepStrictEqual(yield* find(`emails.type eq "other"`), ["carol"])
      assert.deepStrictEqual(yield* find(`emails[not (type eq "work")]`), ["alice", "carol"])
      assert.deepStrictEqual(yield* find(`emails pr`), ["alice", "bob", "carol", "o'neil"])
    }))

  it.effect("injection attempts in values match only themselves; quotes, %, _ and SQL are data", () =>
    Effect.gen(function*() {
      const { scim, p, find } = yield* population
      assert.deepStrictEqual(yield* find(`userName eq "${p}-o'neil@example.com"`), ["o'neil"])
      assert.deepStrictEqual(yield* find(`name.familyName eq "O'Neil"`), ["o'neil"])
      for (
        const attempt of [
          `userName eq "x' OR '1'='1"`,
          `userName eq "x' OR 1=1 --"`,
          `userName eq "\\") OR true OR (\\""`,
          `displayName eq "a'); DROP TABLE users; --"`,
          `userName co "%"`,
          `userName sw "_"`,
          `title eq "' UNION SELECT password_hash FROM users --"`,
          `emails[value eq "x' OR '1'='1"]`
        ]
      ) {
        assert.deepStrictEqual(yield* find(attempt), [], attempt)
      }
      assert.deepStrictEqual(yield* find(`emails.value co "%_"`), ["carol"])
      const sql = yield* SqlClient.SqlClient
      const [{ count }] = yield* sql<{ count: string | number }>`SELECT count(*) AS count FROM users`
      assert.isAbove(Number(count), 4)
      // An attribute name is never SQL: anything but a known attribute is a 400.
      for (
        const attempt of [
          `userName) OR (1=1 eq "x"`,
          `u.password_hash pr`,
          `password eq "Provisioned-Passw0rd!"`,
          `userName;DELETE eq "x"`,
          `nonexistent eq "x"`
        ]
      ) {
        const result = yield* scim.get(`/Users${filter(attempt)}`)
        assert.isTrue(isScimError(result, 400), `${attempt}: ${result.status}`)
        assert.strictEqual(result.body.scimType, "invalidFilter", attempt)
      }
    }))

  it.effect("malformed filters answer 400 invalidFilter; an oversized one 400 tooMany", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      for (
        const bad of [
          `userName eq`,
          `userName zz "x"`,
          `(userName eq "x"`,
          `userName eq "x" and`,
          `active gt true`,
          `meta.created gt "yesterday"`,
          `name eq "x"`,
          `emails[type eq "work"`,
          `title[value eq "x"]`,
          `emails[type eq "work" and emails[value pr]]`
        ]
      ) {
        const result = yield* scim.get(`/Users${filter(bad)}`)
        assert.isTrue(isScimError(result, 400), `${bad}: ${result.status} ${JSON.stringify(result.body)}`)
        assert.strictEqual(result.body.scimType, "invalidFilter", bad)
      }
      const truncated = yield* scim.get(`/Users${filter("userName eq")}`)
      assert.strictEqual(
        truncated.body.detail,
        `Invalid filter "userName eq": the filter ends where a value belongs. Write each comparison as attribute, operator and value, e.g. userName eq "ada@example.com".`
      )
      const huge = Array.from({ length: 65 }, (_, i) => `userName eq "u${i}"`).join(" or ")
      const tooMany = yield* scim.get(`/Users${filter(huge)}`)
      assert.strictEqual(tooMany.body.scimType, "tooMany")
    }))

  it.effect("date filters take an xsd:dateTime only (fraction and offset optional); \"1\", \"-1\", a weekday or a bare date is 400 invalidFilter", () =>
    Effect.gen(function*() {
      const { find, scim } = yield* population
      for (
        const value of ["1", "-1", "Tuesday 5", "2024-01-02", "2024-02-30T00:00:00Z", "2024-01-02 03:04:05Z", "0"]
      ) {
        const result = yield* scim.get(`/Users${filter(`meta.created gt "${value}"`)}`)
        assert.isTrue(isScimError(result, 400), `${value}: ${result.status} ${JSON.stringify(result.body)}`)
        assert.strictEqual(result.body.scimType, "invalidFilter", value)
        assert.include(result.body.detail, "expected an ISO 8601 date-time", value)
      }
      const everyone = ["alice", "bob", "carol", "o'neil"]
      for (
        const value of [
          "2000-01-02T03:04:05Z",
          "2000-01-02T03:04:05.123456Z",
          "2000-01-02T03:04:05+02:00",
          "2000-01-02T03:04:05"
        ]
      ) {
        assert.deepStrictEqual(yield* find(`meta.created gt "${value}"`), everyone, value)
      }
      assert.deepStrictEqual(yield* find(`meta.lastModified lt "2000-01-01T00:00:00-05:00"`), [])
    }))

  it.effect("paging arithmetic: totalResults counts all matches, startIndex is 1-based, itemsPerPage is the page's size", () =>
    Effect.gen(function*() {
      const { scim, p } = yield* population
      const page = (query: string) =>
        Effect.map(scim.get(`/Users${filter(`userName sw "${p}"`)}&sortBy=userName&${query}`), (result) => ({
          status: result.status,
          headers: result.headers,
          body: result.body,
          names: ((result.body.Resources ?? []) as Array<{ userName: string }>).map((r) =>
            r.userName.slice(p.length + 1).split("@")[0]
          )
        }))
      const second = yield* page("startIndex=2&count=2")
      assert.deepInclude(second.body, { schemas: [ListUrn], totalResults: 4, startIndex: 2, itemsPerPage: 2 })
      assert.deepStrictEqual(second.names, ["bob", "carol"])
      const last = yield* page("startIndex=4&count=2")
      assert.deepInclude(last.body, { totalResults: 4, startIndex: 4, itemsPerPage: 1 })
      assert.deepStrictEqual(last.names, ["o'neil"])
      const beyond = yield* page("startIndex=9")
      assert.deepInclude(beyond.body, { totalResults: 4, startIndex: 9, itemsPerPage: 0, Resources: [] })
      const countOnly = yield* page("count=0")
      assert.deepInclude(countOnly.body, { totalResults: 4, startIndex: 1, itemsPerPage: 0, Resources: [] })
      const belowOne = yield* page("startIndex=0&count=1")
      assert.deepInclude(belowOne.body, { startIndex: 1, itemsPerPage: 1 })
      assert.deepStrictEqual(belowOne.names, ["alice"])
      assert.deepInclude((yield* page("startIndex=-3&count=-1")).body, {
        startIndex: 1,
        itemsPerPage: 0,
        totalResults: 4
      })
      assert.deepInclude((yield* page("count=5000")).body, { itemsPerPage: 4 })
      assert.deepStrictEqual((yield* page("sortOrder=descending")).names, ["o'neil", "carol", "bob", "alice"])
      const byGivenName = yield* scim.get(
        `/Users${filter(`userName sw "${p}"`)}&sortBy=name.givenName&sortOrder=Descending`
      )
      assert.deepStrictEqual(
        (byGivenName.body.Resources as Array<{ name: { givenName: string } }>).map((r) => r.name.givenName),
        ["Dara", "Carol", "Bob", "Alice"]
      )
      for (const bad of ["count=abc", "startIndex=1.5", "sortOrder=sideways", "sortBy=emails", "sortBy=nonexistent"]) {
        const result = yield* scim.get(`/Users${filter(`userName sw "${p}"`)}&${bad}`)
        assert.isTrue(isScimError(result, 400), bad)
        assert.strictEqual(result.body.scimType, "invalidValue", bad)
      }
    }))

  it.effect("attributes and excludedAttributes choose what is returned; id and schemas always are", () =>
    Effect.gen(function*() {
      const { scim, p } = yield* population
      const only = yield* scim.get(
        `/Users${
          filter(`userName eq "${p}-alice@example.com"`)
        }&attributes=userName,emails.value,${EnterpriseUrn}:department`
      )
      const user = only.body.Resources[0]
      assert.sameMembers(Object.keys(user), ["schemas", "id", "userName", "emails", EnterpriseUrn])
      assert.deepStrictEqual(user.emails, [{ value: `${p}-alice@example.com` }, {
        value: `${p}-alice@home.example.org`
      }])
      assert.deepStrictEqual(user[EnterpriseUrn], { department: "R&D" })
      const without = yield* scim.get(`/Users/${user.id}?excludedAttributes=emails,name,meta`)
      assert.notProperty(without.body, "emails")
      assert.notProperty(without.body, "name")
      assert.notProperty(without.body, "meta")
      assert.strictEqual(without.body.userName, `${p}-alice@example.com`)
      assert.isString(without.headers.get("etag"))
    }))

  it.effect("projection follows each attribute's returned in /Schemas: default ones (userName) can be excluded, id and schemas cannot", () =>
    Effect.gen(function*() {
      const { scim, p } = yield* population
      const schema = (yield* scim.get(`/Schemas/${UserUrn}`)).body
      const declared = (name: string) => schema.attributes.find((a: { name: string }) => a.name === name).returned
      assert.strictEqual(declared("userName"), "default")
      assert.strictEqual(declared("password"), "never")
      const query = `${filter(`userName eq "${p}-alice@example.com"`)}`
      for (const excluded of ["userName", "USERNAME", `${UserUrn}:userName`, "userName,id,schemas"]) {
        const listed = (yield* scim.get(`/Users${query}&excludedAttributes=${excluded}`)).body.Resources[0]
        assert.notProperty(listed, "userName", excluded)
        assert.isString(listed.id, excluded)
        assert.deepStrictEqual(listed.schemas, [UserUrn, EnterpriseUrn], excluded)
        const read = yield* scim.get(`/Users/${listed.id}?excludedAttributes=${excluded}`)
        assert.notProperty(read.body, "userName", excluded)
        assert.isString(read.body.id, excluded)
      }
      const searched = yield* scim.post("/Users/.search", {
        filter: `userName eq "${p}-alice@example.com"`,
        excludedAttributes: ["userName", "id"]
      })
      assert.notProperty(searched.body.Resources[0], "userName")
      assert.isString(searched.body.Resources[0].id)
      // Asked for by name, what is never returned stays out and what is always returned comes anyway.
      const named = (yield* scim.get(`/Users${query}&attributes=password,displayName`)).body.Resources[0]
      assert.sameMembers(Object.keys(named), ["schemas", "id", "displayName"])
    }))

  it.effect("POST /Users/.search answers what the GET answers for the same query: filter, sort, page and projection", () =>
    Effect.gen(function*() {
      const { scim, p } = yield* population
      const query = `userName sw "${p}" and not (name.givenName eq "Dara")`
      const listed = yield* scim.get(
        `/Users${filter(query)}&sortBy=name.givenName&sortOrder=descending&startIndex=2&count=2` +
          `&attributes=userName,name.givenName&excludedAttributes=name.givenName`
      )
      assert.strictEqual(listed.status, 200, JSON.stringify(listed.body))
      const body = {
        schemas: [SearchRequestUrn],
        filter: query,
        sortBy: "name.givenName",
        sortOrder: "descending",
        startIndex: 2,
        count: 2,
        attributes: ["userName", "name.givenName"],
        excludedAttributes: ["name.givenName"]
      }
      const searched = yield* scim.post("/Users/.search", body)
      assert.strictEqual(searched.status, 200, JSON.stringify(searched.body))
      assert.match(searched.headers.get("content-type") ?? "", /^application\/scim\+json/)
      assert.deepStrictEqual(searched.body, listed.body)
      assert.deepInclude(searched.body, { schemas: [ListUrn], totalResults: 3, startIndex: 2, itemsPerPage: 2 })
      assert.deepStrictEqual(
        (searched.body.Resources as Array<{ userName: string }>).map((r) => r.userName.slice(p.length + 1)),
        ["bob@example.com", "alice@example.com"]
      )
      // As plain JSON, without `schemas`, and under /api/v1/scim: the same answer.
      const plain = yield* scim.post("/Users/.search", { ...body, schemas: undefined }, {
        "content-type": "application/json"
      })
      assert.deepStrictEqual(plain.body, listed.body)
      const aliased = yield* http("/api/v1/scim/Users/.search", {
        method: "POST",
        headers: { authorization: `Bearer ${scim.key}`, "content-type": "application/scim+json" },
        body: JSON.stringify(body)
      })
      assert.deepStrictEqual(aliased.body, listed.body)
      const everyone = yield* scim.post("/Users/.search", { filter: `userName sw "${p}"`, count: 0 })
      assert.deepInclude(everyone.body, { totalResults: 4, itemsPerPage: 0, Resources: [] })
    }))

  it.effect("a search body that breaks the rules answers a SCIM 400 saying which", () =>
    Effect.gen(function*() {
      const { scim, p } = yield* population
      const refused = (body: unknown) => scim.post("/Users/.search", body)
      const wrongSchema = yield* refused({ schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"] })
      assert.isTrue(isScimError(wrongSchema, 400))
      assert.strictEqual(wrongSchema.body.scimType, "invalidSyntax")
      assert.include(wrongSchema.body.detail, SearchRequestUrn)
      for (const bad of [{ count: "10" }, { startIndex: 1.5 }, { attributes: "userName" }, { filter: 42 }, "[1,2]"]) {
        const result = yield* refused(bad)
        assert.isTrue(isScimError(result, 400), JSON.stringify(bad))
        assert.strictEqual(result.body.scimType, "invalidSyntax", JSON.stringify(bad))
      }
      const malformed = yield* refused({ filter: `userName eq` })
      assert.isTrue(isScimError(malformed, 400))
      assert.strictEqual(malformed.body.scimType, "invalidFilter")
      const oversized = yield* refused({ filter: `userName eq "${"x".repeat(8000)}"` })
      assert.isTrue(isScimError(oversized, 400))
      const sideways = yield* refused({ filter: `userName sw "${p}"`, sortOrder: "sideways" })
      assert.isTrue(isScimError(sideways, 400))
      assert.strictEqual(sideways.body.scimType, "invalidValue")
      const { key } = yield* createKey(["agents:read"])
      const scopeless = yield* http("/v1/scim/Users/.search", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/scim+json" },
        body: JSON.stringify({ schemas: [SearchRequestUrn] })
      })
      assert.isTrue(isScimError(scopeless, 403))
    }))

  it.effect("/Me, /Bulk and a search across resource types answer 501 as SCIM errors, under both bases", () =>
    Effect.gen(function*() {
      const scim = yield* scimClient()
      for (const base of ["/v1/scim", "/api/v1/scim"]) {
        for (const [method, path] of [["GET", "/Me"], ["PATCH", "/Me"], ["POST", "/Bulk"], ["POST", "/.search"]]) {
          const result = yield* http(`${base}${path}`, {
            method,
            headers: { authorization: `Bearer ${scim.key}`, "content-type": "application/scim+json" },
            ...(method === "GET" ? {} : { body: "{}" })
          })
          assert.isTrue(isScimError(result, 501), `${method} ${base}${path}: ${JSON.stringify(result.body)}`)
          assert.match(result.body.detail, /not supported/)
        }
      }
    }))
})
