import { startFakeBedrock } from '../../control-plane/lab/bedrock-stand-in/start-fake-bedrock.ts'
import { demoSnapshot } from '../../control-plane/lab/embedded/demo-snapshot.ts'
import {
  startScorerOver,
  startSimulatedPools,
} from '../../control-plane/lab/embedded/start-simulated-pools.ts'
import { l40s27bFp8 } from '../../shared/gpu/gpu-profile.ts'
import { mintApiKey, sha256HexOf } from '../../shared/tenancy/api-key.ts'

/** What the edge request-path suite needs to reach, as plain data (it crosses into workerd). */
export interface RequestPathStack {
  scorerUrl: string
  /** Its metrics listener (GET /metrics), apart from its API. */
  scorerMetricsUrl: string
  /** A second scorer over the same pods whose pool is always saturated (TTFT SLO 1 µs). */
  saturatedScorerUrl: string
  bedrockUrl: string
  signingSecret: string
  /** The demo config snapshot, as JSON. */
  snapshot: string
  demoKey: string
}

/**
 * Simulated pods behind two scorers (one normal, one saturated) and a local Bedrock
 * stand-in: the real parts the edge talks to, started in Node for the suite that runs
 * the edge in workerd and in Node.
 */
export async function startRequestPathStack(): Promise<{
  stack: RequestPathStack
  close(): Promise<void>
}> {
  const bedrock = await startFakeBedrock({ port: 0 })
  const key = mintApiKey((n) => crypto.getRandomValues(new Uint8Array(n)), { id: 'demo' })
  const snapshot = await demoSnapshot(bedrock.url, key.id, await sha256HexOf(key.secret))
  const pool = snapshot.pools['demo/sim-27b']
  const model = pool?.spec.models[0]?.name
  // The demo's pooling pool, for /v1/embeddings (its pods run vLLM's pooling runner).
  const embed = snapshot.pools['demo/sim-embed']
  const embedModel = embed?.spec.models[0]?.name
  if (!pool || !model || !embed || !embedModel) throw new Error('the demo config lacks a pool')
  const signingSecret = 'request-path-signing-secret'
  const scorer = {
    signingSecrets: [signingSecret],
    backends: {
      'sim-local': { pool: pool.name, model },
      'sim-embed-local': { pool: embed.name, model: embedModel },
    },
  }
  const withSlo = (ttftSloMs: number) => ({ name: pool.name, spec: { ...pool.spec, ttftSloMs } })
  const normal = await startSimulatedPools({
    pools: [withSlo(pool.spec.ttftSloMs ?? 2_000), { name: embed.name, spec: embed.spec }],
    podsPerPool: 2,
    // Pod names differ across the two pools (the scorer keys pods by name).
    sim: {
      profile: l40s27bFp8,
      timeScale: 50,
      seed: 3,
      eventEncoding: 'map',
      namePrefix: (name) => name,
    },
    scorer,
    log: () => {},
  })
  const saturated = await startScorerOver(
    normal.fleets
      .filter((fleet) => fleet.pool.name === pool.name)
      .map((fleet) => ({ ...fleet, pool: withSlo(0.001) })),
    scorer,
    () => {},
  )
  return {
    stack: {
      scorerUrl: normal.scorer.url,
      scorerMetricsUrl: normal.scorer.metricsUrl ?? '',
      saturatedScorerUrl: saturated.url,
      bedrockUrl: bedrock.url,
      signingSecret,
      snapshot: JSON.stringify(snapshot),
      demoKey: key.key,
    },
    async close() {
      await saturated.close()
      await normal.close()
      await bedrock.close()
    },
  }
}
