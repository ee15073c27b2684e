import { demoSnapshot } from '../../control-plane/embedded/demo-snapshot.ts'
import { startFakeBedrock } from '../../control-plane/fake-bedrock/start-fake-bedrock.ts'
import { ScorerConfig } from '../../control-plane/scorer/scorer-config.ts'
import { startScorer } from '../../control-plane/scorer/start-scorer.ts'
import { scorerPodOf, startSimFleet } from '../../control-plane/sim/sim-fleet.ts'
import { loadSimModelAssets } from '../../control-plane/sim/sim-model-assets.ts'
import { l40s27bFp8 } from '../../shared/gpu/gpu-profile.ts'
import { mintApiKey, sha256HexOf } from '../../shared/tenancy/api-key.ts'

/** What the edge request-path suite needs to reach, as plain data (it crosses into workerd). */
export interface RequestPathStack {
  scorerUrl: string
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
  const pool = Object.values(snapshot.pools)[0]
  const model = pool?.spec.models[0]?.name
  if (!pool || !model) throw new Error('the demo config has no pool')
  const pods = await startSimFleet({
    pods: 2,
    profile: l40s27bFp8,
    modelName: model,
    port: 0,
    zmqPort: 0,
    timeScale: 50,
    seed: 3,
    eventEncoding: 'map',
    assets: loadSimModelAssets(),
  })
  const signingSecret = 'request-path-signing-secret'
  const scorer = (ttftSloMs: number) =>
    startScorer(
      ScorerConfig.parse({
        port: 0,
        signingSecrets: [signingSecret],
        pools: [{ name: pool.name, spec: { ...pool.spec, ttftSloMs } }],
        backends: { 'sim-local': { pool: pool.name, model } },
        pods: pods.map((pod) => scorerPodOf(pod, pool.name)),
      }),
      () => {},
    )
  const normal = await scorer(pool.spec.ttftSloMs ?? 2_000)
  const saturated = await scorer(0.001)
  return {
    stack: {
      scorerUrl: normal.url,
      saturatedScorerUrl: saturated.url,
      bedrockUrl: bedrock.url,
      signingSecret,
      snapshot: JSON.stringify(snapshot),
      demoKey: key.key,
    },
    async close() {
      await normal.close()
      await saturated.close()
      await Promise.all(pods.map((pod) => pod.close()))
      await bedrock.close()
    },
  }
}
