import { afterEach, describe, expect, it } from 'vitest'
import {
  type SimulatedPools,
  startSimulatedPools,
} from '../../../../control-plane/lab/embedded/start-simulated-pools.ts'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'
import { l40s27bFp8 } from '../../../../shared/gpu/gpu-profile.ts'
import { model, poolSpec, secret } from '../../../support/scorer-stack.ts'

// A pool whose first model has task Embed runs its simulated pods on vLLM's pooling
// runner (/v1/embeddings, no completions routes); every other pool on the generate runner.

let running: SimulatedPools | null = null
afterEach(async () => {
  await running?.close()
  running = null
})

async function post(url: string, body: object): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  await response.arrayBuffer()
  return response.status
}

describe('startSimulatedPools', () => {
  it('runs an embedding pool’s pods on the pooling runner, a generation pool’s on generate', async () => {
    const embedder = 'qwen3-embedding-sim'
    running = await startSimulatedPools({
      pools: [
        {
          name: 'embed',
          spec: poolSpec({
            models: [{ name: embedder, tokenizer: 'qwen3', maxContextTokens: 8192, task: 'Embed' }],
          }),
        },
        { name: 'chat', spec: poolSpec() },
      ],
      podsPerPool: 1,
      sim: { profile: l40s27bFp8, timeScale: 50, seed: 3, assets: loadSimModelAssets() },
      scorer: { signingSecrets: [secret] },
      log: () => {},
    })
    const [embedPod, chatPod] = running.pods
    expect(embedPod?.config.runner).toBe('pooling')
    expect(chatPod?.config.runner).toBe('generate')
    expect(await post(`${embedPod?.url}/v1/embeddings`, { model: embedder, input: 'hi' })).toBe(200)
    const chat = (name: string) => ({
      model: name,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 1,
    })
    expect(await post(`${embedPod?.url}/v1/chat/completions`, chat(embedder))).toBe(404)
    expect(await post(`${chatPod?.url}/v1/chat/completions`, chat(model))).toBe(200)
  })
})
