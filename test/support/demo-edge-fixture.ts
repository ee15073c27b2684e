import { afterAll, beforeAll } from 'vitest'
import {
  type FakeBedrock,
  startFakeBedrock,
} from '../../control-plane/lab/bedrock-stand-in/start-fake-bedrock.ts'
import { demoSnapshot } from '../../control-plane/lab/embedded/demo-snapshot.ts'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
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
