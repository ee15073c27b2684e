import { afterAll, beforeAll } from 'vitest'
import {
  type FakeBedrock,
  startFakeBedrock,
} from '../../control-plane/lab/bedrock-stand-in/start-fake-bedrock.ts'
import { demoSnapshot } from '../../control-plane/lab/embedded/demo-snapshot.ts'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import type { PolicyDecision } from '../../shared/policy/policy-decision.ts'
import { mintApiKey, sha256HexOf } from '../../shared/tenancy/api-key.ts'

/** The demo snapshot with a fresh demo key and the local Bedrock stand-in, for a test file. */
export interface DemoEdgeFixture {
  readonly snapshot: ConfigSnapshot
  readonly demoKey: string
}

/**
 * Starts the Bedrock stand-in and compiles the demo snapshot around it before the file's
 * tests (and stops it after): what tests of the edge app in-process need.
 */
export function useDemoEdgeFixture(): DemoEdgeFixture {
  let bedrock: FakeBedrock | null = null
  let snapshot: ConfigSnapshot | null = null
  let demoKey = ''
  beforeAll(async () => {
    bedrock = await startFakeBedrock({ port: 0 })
    const key = mintApiKey((n) => crypto.getRandomValues(new Uint8Array(n)), { id: 'demo' })
    snapshot = await demoSnapshot(bedrock.url, key.id, await sha256HexOf(key.secret))
    demoKey = key.key
  })
  afterAll(() => bedrock?.close())
  return {
    get snapshot() {
      if (!snapshot) throw new Error('the demo fixture is read before its beforeAll ran')
      return snapshot
    },
    get demoKey() {
      return demoKey
    },
  }
}

/** The demo's local attempt: qwen3.8-27b-fp8 on demo/sim-local. */
export const demoLocal = {
  backend: 'demo/sim-local',
  locality: 'InCluster',
  pool: 'demo/sim-27b',
  model: 'qwen3.8-27b-fp8',
} as const

/** The demo's burst attempt: claude-sonnet on demo/bedrock-claude. */
export const demoBedrock = {
  backend: 'demo/bedrock-claude',
  locality: 'External',
  provider: 'demo/bedrock-local',
  model: 'claude-sonnet',
} as const

/** The demo rule local-then-bedrock's decision to serve with `attempts`, in order. */
export const demoServe = (
  ...attempts: (typeof demoLocal | typeof demoBedrock)[]
): PolicyDecision => ({
  kind: 'serve',
  policy: 'demo/demo',
  rule: 'local-then-bedrock',
  model: 'qwen3.8-27b-fp8',
  attempts,
  reason: 'test',
  trace: [],
})

/**
 * A chat request for the demo's Bedrock-only model (its policy names no pool, so the edge
 * decides it alone), sent to the edge at `url` with the client's `requestId`; read whole.
 */
export async function postBedrockOnly(url: string, key: string, requestId: string) {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'x-request-id': requestId,
    },
    body: JSON.stringify({
      model: demoBedrock.model,
      messages: [{ role: 'user', content: 'Only Bedrock serves me' }],
      max_tokens: 6,
    }),
  })
  return { status: response.status, text: await response.text() }
}
