import { describe, expect, it } from 'vitest'
import { type GpuProfile, kvBytesPerToken, l40s27bFp8 } from '../../../shared/gpu/gpu-profile.ts'
import {
  adminPods,
  decisionOf,
  metricTotal,
  model,
  poolSpec,
  type Stack,
  send,
  until,
  words,
} from '../../support/scorer-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

// Pods with a tiny KV cache: 320 blocks of 16 tokens, so two or three prompts of a few
// thousand tokens fill one. The pool spec says so too, so the scorer knows before it
// reads the pods' cache_config_info.
const blocks = 320
const tinyKv: GpuProfile = {
  ...l40s27bFp8,
  kvCacheBytes: blocks * l40s27bFp8.blockSize * kvBytesPerToken(l40s27bFp8),
  model: { ...l40s27bFp8.model, maxModelLen: 4096 },
}
const tinyPool = (lateBinding = true, extra: object = {}) =>
  poolSpec({
    models: [{ name: model, tokenizer: 'qwen3', maxContextTokens: 4096 }],
    scheduler: { numGpuBlocks: blocks },
    routing: { strategy: 'kinference', kinference: { lateBinding } },
    ...extra,
  } as never)

const stacks = useScorerStacks()

/** ~`tokens` prompt tokens of words no other request shares. */
const chat = (seed: number, tokens: number, extra: object = {}) => ({
  model,
  messages: [{ role: 'user', content: words(seed, Math.round(tokens / 6.8)) }],
  max_tokens: 8,
  ignore_eos: true,
  ...extra,
})

async function lateBinding(s: Stack) {
  const pool = (await adminPods(s)).pools[0]
  if (!pool) throw new Error('no pool')
  const inFlight = pool.pods.reduce((sum, pod) => sum + pod.load.inFlight, 0)
  return { ...pool.lateBinding, inFlight }
}

const pause = (s: Stack, paused: boolean) => {
  for (const pod of s.pods) pod.setFaults({ paused })
}

describe('late binding in the scorer', () => {
  it('holds requests while the pods are memory-full, then completes them all', async () => {
    const s = await stacks.start({ pods: 2, profile: tinyKv, spec: tinyPool() })
    // Paused pods start nothing: what is dispatched stays in flight, so the pods' memory
    // (as the scorer sees it) fills up and later requests must wait in the scorer.
    pause(s, true)
    const answers = Array.from({ length: 8 }, (_, i) =>
      send(s, '/v1/chat/completions', chat(40 + i, 1500, { stream: i % 2 === 0 })),
    )
    await until(async () => {
      const state = await lateBinding(s)
      return state.held >= 1 && state.held + state.inFlight === 8
    })
    expect(
      await metricTotal(s, 'kinference_scorer_held_requests', { pool: 'default' }),
    ).toBeGreaterThan(0)
    pause(s, false)
    const done = await Promise.all(answers)
    expect(done.map((a) => a.status)).toEqual(Array(8).fill(200))
    const heldMs = done.map((a) => Number(decisionOf(a.headers).held_ms))
    expect(heldMs.every((ms) => Number.isFinite(ms) && ms >= 0)).toBe(true)
    expect(heldMs.some((ms) => ms > 0)).toBe(true)
    const state = await lateBinding(s)
    expect(state.held).toBe(0)
    expect(state.inFlight).toBe(0)
    expect(state.heldTotal).toBeGreaterThanOrEqual(1)
    expect(await metricTotal(s, 'kinference_scorer_held_requests', { pool: 'default' })).toBe(0)
    expect(
      await metricTotal(s, 'kinference_scorer_hold_seconds_count', {
        outcome: 'dispatched',
        pool: 'default',
      }),
    ).toBe(state.heldTotal)
  })

  it('never dispatches a request whose client left while it was held', async () => {
    const s = await stacks.start({ pods: 1, profile: tinyKv, spec: tinyPool() })
    pause(s, true)
    const first = send(
      s,
      '/v1/chat/completions',
      chat(50, 2700),
      {},
      {
        headers: { 'x-request-id': 'late-a' },
      },
    )
    await until(async () => (await lateBinding(s)).inFlight === 1)
    const leaving = new AbortController()
    const gone = send(
      s,
      '/v1/chat/completions',
      chat(51, 2700),
      {},
      {
        signal: leaving.signal,
        headers: { 'x-request-id': 'late-b' },
      },
    ).catch((error: Error) => error.name)
    await until(async () => (await lateBinding(s)).held === 1)
    leaving.abort()
    expect(await gone).toBe('AbortError')
    await until(async () => (await lateBinding(s)).held === 0)
    // The first request ends and frees the pod: a release that would have sent the
    // departed one now comes and goes; a later request is dispatched after it.
    pause(s, false)
    expect((await first).status).toBe(200)
    const later = await send(
      s,
      '/v1/chat/completions',
      chat(52, 100),
      {},
      {
        headers: { 'x-request-id': 'late-c' },
      },
    )
    expect(later.status).toBe(200)
    // Dispatching the departed one would have left its load counted on the pod.
    expect((await lateBinding(s)).inFlight).toBe(0)
    expect(
      await metricTotal(s, 'kinference_scorer_hold_seconds_count', {
        outcome: 'client-gone',
        pool: 'default',
      }),
    ).toBe(1)
    expect(
      await metricTotal(s, 'kinference_scorer_requests_total', {
        outcome: 'completed',
        pod: 'sim-pod-0',
        pool: 'default',
      }),
    ).toBe(2)
  })

  it('answers held requests with an OpenAI-shaped error when the scorer closes', async () => {
    const s = await stacks.start({ pods: 1, profile: tinyKv, spec: tinyPool() })
    pause(s, true)
    const first = send(s, '/v1/chat/completions', chat(60, 2700)).catch(() => null)
    await until(async () => (await lateBinding(s)).inFlight === 1)
    const held = send(s, '/v1/chat/completions', chat(61, 2700))
    await until(async () => (await lateBinding(s)).held === 1)
    await s.scorer.close()
    const answer = await held
    expect(answer.status).toBe(503)
    const error = JSON.parse(answer.text).error
    expect(error.code).toBe('upstream_unavailable')
    expect(error.type).toBe('server_error')
    expect(error.message).toMatch(/shutting down/)
    await first
  })

  it('holds nothing when lateBinding is off', async () => {
    const s = await stacks.start({ pods: 2, profile: tinyKv, spec: tinyPool(false) })
    pause(s, true)
    const answers = Array.from({ length: 8 }, (_, i) =>
      send(s, '/v1/chat/completions', chat(70 + i, 1500)),
    )
    // Everything goes to a pod at once, however full.
    await until(async () => (await lateBinding(s)).inFlight === 8)
    const state = await lateBinding(s)
    expect(state).toMatchObject({ enabled: false, held: 0, heldTotal: 0 })
    pause(s, false)
    const done = await Promise.all(answers)
    expect(done.map((a) => a.status)).toEqual(Array(8).fill(200))
    expect(done.map((a) => decisionOf(a.headers).held_ms)).toEqual(Array(8).fill('0'))
  })

  it('answers "saturated" at once instead of holding when the edge may burst', async () => {
    const s = await stacks.start({
      pods: 1,
      profile: tinyKv,
      spec: tinyPool(true, { ttftSloMs: 0.001 }),
    })
    pause(s, true)
    const first = send(s, '/v1/chat/completions', chat(80, 2700))
    await until(async () => (await lateBinding(s)).inFlight === 1)
    // Without bursting this one would be held (see above); with it, the edge gets to burst.
    const burst = await send(s, '/v1/chat/completions', chat(81, 2700), { allowBurst: true })
    expect(burst.status).toBe(503)
    expect(JSON.parse(burst.text).error.type).toBe('saturated')
    expect((await lateBinding(s)).heldTotal).toBe(0)
    pause(s, false)
    expect((await first).status).toBe(200)
  })
})
