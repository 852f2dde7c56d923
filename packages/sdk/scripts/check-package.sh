#!/usr/bin/env bash
# Proves the SDK is publishable: packs @agent-platform/domain and @agent-platform/sdk
# (`pnpm pack`: built to ESM JavaScript with .d.ts, workspace:* rewritten), installs the
# tarballs with plain npm in a project outside the workspace, typechecks a TypeScript
# program with strict default settings under moduleResolution nodenext and bundler, and
# runs a plain-Node program against the built service (`pnpm build`'s dist/main.mjs).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "packing into $work"
(cd "$root/packages/domain" && pnpm pack --pack-destination "$work" >/dev/null)
(cd "$root/packages/sdk" && pnpm pack --pack-destination "$work" >/dev/null)
if tar -xzOf "$work"/agent-platform-sdk-*.tgz package/package.json | grep -q 'workspace:'; then
  echo "the packed SDK still depends on workspace:*" >&2; exit 1
fi

consumer="$work/consumer"
mkdir -p "$consumer"
cd "$consumer"
typescript="$(node -p "require('$root/package.json').devDependencies.typescript")"
cat > package.json <<JSON
{ "name": "sdk-consumer", "private": true, "type": "module" }
JSON
npm install --no-audit --no-fund --loglevel=error "$work"/agent-platform-domain-*.tgz "$work"/agent-platform-sdk-*.tgz \
  "typescript@$typescript" "@types/node@20" >/dev/null

# One effect for the project and both packages: two copies' schemas and services do not mix (a pinned
# effect once got a copy of its own beside the one a newer @effect/platform-node wanted).
copies="$(find node_modules -path '*/node_modules/effect/package.json' | sort)"
if [ "$(printf '%s\n' "$copies" | wc -l)" != 1 ]; then
  echo "the consumer holds more than one copy of effect; make every effect dependency a compatible range:" >&2
  printf '%s\n' "$copies" >&2
  exit 1
fi
echo "one copy of effect: $(node -p "require('./node_modules/effect/package.json').version")"

# TypeScript with the strict defaults, no skipLibCheck: every .d.ts shipped must typecheck.
cat > consumer.ts <<'TS'
import { ApiError, chat, ConnectionError, DownloadBrokenError, fetchDownload, make, makePromiseClient, PlatformApi, type PromiseClient, roomEvents, RoomEventsBrokenError } from "@agent-platform/sdk"
import { Errors, type Agents } from "@agent-platform/domain"

export const listAgents = async (client: PromiseClient): Promise<Array<string>> => {
  const { agents } = await client.agents.list({ query: {} })
  return agents.map((agent: Agents.Agent) => agent.name)
}
export const describeError = (error: unknown): string =>
  error instanceof ApiError ? `${error._tag} ${error.status}: ${error.message}`
  : error instanceof ConnectionError ? error.message
  : String(error)
export const client = makePromiseClient({ baseUrl: "http://127.0.0.1:8080", apiKey: "sk_live_...", timeout: "10 seconds" })
export const effectClient = [make, PlatformApi, Errors.NotFound] as const
export const firstEvent = async (): Promise<string | undefined> => {
  for await (const event of chat({ baseUrl: "http://127.0.0.1:8080", apiKey: "sk_live_...", timeout: "10 seconds" }, { message: "hi" })) {
    return "type" in event ? event.type : event.text
  }
  return undefined
}
export const firstChunk = async (): Promise<number | string> => {
  try {
    const { body } = await fetchDownload({ baseUrl: "http://127.0.0.1:8080", sessionToken: "...", timeout: "10 seconds" }, "/api/export/metrics")
    return (await body.getReader().read()).value?.byteLength ?? 0
  } catch (error) {
    return error instanceof DownloadBrokenError || error instanceof RoomEventsBrokenError ? error._tag : describeError(error)
  }
}
export const frames = roomEvents({ baseUrl: "http://127.0.0.1:8080", transport: "auto" }, "chat-id")
TS
for resolution in nodenext bundler; do
  module="nodenext"; [[ "$resolution" == "bundler" ]] && module="esnext"
  cat > "tsconfig.$resolution.json" <<JSON
{ "compilerOptions": { "strict": true, "target": "es2022", "module": "$module", "moduleResolution": "$resolution", "types": ["node"], "noEmit": true }, "files": ["consumer.ts"] }
JSON
  npx --no-install tsc -p "tsconfig.$resolution.json"
  echo "typechecks with moduleResolution $resolution"
done

# Plain Node against the built service.
port="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
password="Sdk-Check-Passw0rd!"
(cd "$root" && pnpm build >/dev/null)
HOST=127.0.0.1 PORT="$port" DATA_DIR="$work/data" BOOTSTRAP_ADMIN_PASSWORD="$password" LOG_LEVEL=Warn \
  node "$root/packages/server/dist/main.mjs" >"$work/server.log" 2>&1 &
server_pid=$!
cat > consumer.mjs <<'JS'
import { ApiError, chat, ConnectionError, fetchDownload, makePromiseClient, roomEvents } from "@agent-platform/sdk"

const baseUrl = process.env.BASE_URL
const admin = makePromiseClient({ baseUrl })
const deadline = Date.now() + 60_000
for (;;) {
  try { await admin.health(); break } catch (error) {
    if (!(error instanceof ConnectionError) || Date.now() > deadline) throw error
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}
await admin.auth.login({ payload: { email: "admin@example.com", password: process.env.PASSWORD } })
const { key } = await admin.keys.create({ payload: { name: "sdk package check", scopes: ["agents:read"] } })
const client = makePromiseClient({ baseUrl, apiKey: key })
const { agents } = await client.agents.list({ query: {} })
const refused = await client.actions.list().then(() => undefined, (error) => error)
if (!(refused instanceof ApiError) || refused._tag !== "ScopeMissing" || refused.status !== 403) throw new Error(`expected ScopeMissing, got ${refused}`)
const nowhere = makePromiseClient({ baseUrl: `http://127.0.0.1:${process.env.CLOSED_PORT}` })
const unreachable = await nowhere.health().then(() => undefined, (error) => error)
if (!(unreachable instanceof ConnectionError)) throw new Error(`expected ConnectionError, got ${unreachable}`)
const chatFailure = async (options) => {
  try { for await (const _ of chat(options, { message: "hi" })) void _ } catch (error) { return error }
}
const chatRefused = await chatFailure({ baseUrl, apiKey: "sk_live_not-a-key" })
if (!(chatRefused instanceof ApiError) || chatRefused._tag !== "Unauthenticated" || chatRefused.status !== 401) throw new Error(`expected Unauthenticated, got ${chatRefused}`)
const chatUnreachable = await chatFailure({ baseUrl: `http://127.0.0.1:${process.env.CLOSED_PORT}`, apiKey: key })
if (!(chatUnreachable instanceof ConnectionError)) throw new Error(`expected ConnectionError, got ${chatUnreachable}`)
const session = await admin.sessionToken()
const { contentType } = await fetchDownload({ baseUrl, sessionToken: session }, "/api/export/metrics")
const downloadRefused = await fetchDownload({ baseUrl, sessionToken: "not-a-session" }, "/api/export/metrics")
  .then(() => undefined, (error) => error)
if (!(downloadRefused instanceof ApiError) || downloadRefused.status !== 401) throw new Error(`expected a 401 ApiError, got ${downloadRefused}`)
const roomFailure = async (options) => {
  try { for await (const _ of roomEvents(options, "no-such-chat")) void _ } catch (error) { return error }
}
const roomUnreachable = await roomFailure({ baseUrl: `http://127.0.0.1:${process.env.CLOSED_PORT}`, sessionToken: session })
if (!(roomUnreachable instanceof ConnectionError)) throw new Error(`expected ConnectionError, got ${roomUnreachable}`)
console.log(`plain Node: ${agents.length} agents listed; ${refused._tag} ${refused.status}; ${unreachable.message}`)
console.log(`plain Node chat: ${chatRefused._tag} ${chatRefused.status} "${chatRefused.message}"; ${chatUnreachable.message}`)
console.log(`plain Node downloads and rooms: ${contentType}; ${downloadRefused._tag} ${downloadRefused.status}; ${roomUnreachable.message}`)
await Promise.all([admin.dispose(), client.dispose(), nowhere.dispose()])
JS
closed_port="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
BASE_URL="http://127.0.0.1:$port" CLOSED_PORT="$closed_port" PASSWORD="$password" node consumer.mjs || { cat "$work/server.log" >&2; exit 1; }
