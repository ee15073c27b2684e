import { createServer } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  type ChatTurnIds,
  chatPromptIds,
  createChatFrame,
} from '../../../../control-plane/lab/bench/chat-prompt-ids.ts'
import { parseDataSpec } from '../../../../control-plane/lab/bench/data-spec.ts'
import type { LoadProfile } from '../../../../control-plane/lab/bench/load-profile.ts'
import type { BenchmarkRun } from '../../../../control-plane/lab/bench/request-record.ts'
import {
  type LiveBenchmarkOptions,
  runLiveBenchmark,
} from '../../../../control-plane/lab/bench/run-live-benchmark.ts'
import { createWorkload } from '../../../../control-plane/lab/bench/workload.ts'
import { scorerPodOf, startSimFleet } from '../../../../control-plane/lab/sim/sim-fleet.ts'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'
import type { SimPod } from '../../../../control-plane/lab/sim/sim-pod.ts'
import { ScorerConfig } from '../../../../control-plane/scorer/scorer-config.ts'
import { startScorer } from '../../../../control-plane/scorer/start-scorer.ts'
import { l40s27bFp8 } from '../../../../shared/gpu/gpu-profile.ts'
import { model, poolSpec } from '../../../support/scorer-stack.ts'

let assets: ReturnType<typeof loadSimModelAssets>
let frame: ReturnType<typeof createChatFrame>
const cleanups: (() => Promise<unknown>)[] = []

beforeAll(() => {
  assets = loadSimModelAssets()
  frame = createChatFrame(assets.tokenizer)
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function fleet(pods = 1): Promise<SimPod[]> {
  const started = await startSimFleet({
    pods,
    profile: l40s27bFp8,
    modelName: model,
    port: 0,
    zmqPort: 0,
    timeScale: 50,
    seed: 3,
    eventEncoding: 'map',
    assets,
  })
  cleanups.push(() => Promise.all(started.map((pod) => pod.close())))
  return started
}

function options(
  target: string,
  data: string,
  profile: LoadProfile,
  maxRequests: number,
  overrides: Partial<LiveBenchmarkOptions> = {},
): LiveBenchmarkOptions {
  return {
    target,
    model,
    workload: createWorkload(parseDataSpec(data), 42, assets.vocabulary),
    profile,
    maxRequests,
    decode: (ids) => assets.tokenizer.decode(ids),
    routerLabel: 'direct',
    workloadName: 'test',
    dataSpec: data,
    pods: 1,
    gpuProfile: 'l40s-27b-fp8',
    seed: 42,
    timeoutMs: 20_000,
    ...overrides,
  }
}

/** The prompt the pod builds for a turn: the chat template around the planned ids. */
function expectedPrompt(run: BenchmarkRun, data: string, conversation: number, turn: number) {
  const plan = createWorkload(parseDataSpec(data), 42, assets.vocabulary).conversation(conversation)
  const history: ChatTurnIds[] = plan.turns.slice(0, turn).map((t, i) => {
    const answer = run.records.find((r) => r.conversation === conversation && r.turn === i)
    // The answer's ids: one stable word per output token.
    return { userIds: t.userIds, assistantIds: new Array(answer?.outputTokens ?? 0).fill(0) }
  })
  const current = plan.turns[turn]
  if (!current) throw new Error('no such turn')
  return {
    plan,
    promptTokens: chatPromptIds(frame, plan.prefix?.ids ?? null, [
      ...history,
      { userIds: current.userIds },
    ]).length,
    outputTokens: current.outputTokens,
  }
}

const blocks = (tokens: number) => Math.floor(tokens / 16) * 16
const sharedPrefix = 'prompt_tokens=24,output_tokens=8,prefix_count=2,prefix_tokens=200'

describe('runLiveBenchmark against simulated vLLM pods', () => {
  it.each([
    ['poisson', { kind: 'poisson', rate: 40 }],
    ['concurrent', { kind: 'concurrent', streams: 3 }],
  ] as const)(
    'shared prefixes, %s: prompts as the chat template makes them, exact outputs, cache hits',
    async (_, profile) => {
      const [pod] = await fleet()
      const done: number[] = []
      const run = await runLiveBenchmark(
        options(pod?.url ?? '', sharedPrefix, profile, 12, { onProgress: (n) => done.push(n) }),
      )
      expect(run.config).toEqual({
        mode: 'live',
        router: 'direct',
        workload: 'test',
        profile: profile.kind === 'poisson' ? 'poisson@40' : 'concurrent@3',
        rate: profile.kind === 'poisson' ? 40 : 3,
        pods: 1,
        gpuProfile: 'l40s-27b-fp8',
        seed: 42,
        dataSpec: sharedPrefix,
      })
      expect(run.records).toHaveLength(12)
      expect(done).toEqual(Array.from({ length: 12 }, (_, i) => i + 1))
      expect(new Set(run.records.map((r) => r.id)).size).toBe(12)
      expect(run.prefixCache).toBeNull()
      expect(run.startMs).toBe(Math.min(...run.records.map((r) => r.startMs)))
      expect(run.endMs).toBe(Math.max(...run.records.map((r) => r.endMs)))
      let hits = 0
      for (const record of run.records) {
        expect(record.error).toBeNull()
        expect(record.turn).toBe(0)
        expect(record.id).toBe(`c${record.conversation}t0`)
        const expected = expectedPrompt(run, sharedPrefix, record.conversation, 0)
        expect(record.promptTokens).toBe(expected.promptTokens)
        expect(record.outputTokens).toBe(8)
        expect(record.tokenTimesMs).toHaveLength(8)
        expect(record.firstTokenMs).toBe(record.tokenTimesMs[0])
        expect(record.startMs).toBeLessThan(record.firstTokenMs ?? 0)
        expect(record.endMs).toBeGreaterThanOrEqual(record.tokenTimesMs[7] ?? Number.NaN)
        expect(record.pod).toBeNull() // no router in front: no decision header
        // A request whose prefix an earlier, finished request computed hits it.
        const prefix = expected.plan.prefix?.ids.length ?? 0
        const system = frame.open.system.length + prefix + frame.close.length
        const warm = run.records.some(
          (other) =>
            other.endMs < record.startMs &&
            createWorkload(parseDataSpec(sharedPrefix), 42, assets.vocabulary).conversation(
              other.conversation,
            ).prefix?.key === expected.plan.prefix?.key,
        )
        if (warm) {
          hits++
          expect(record.cachedTokens).toBeGreaterThanOrEqual(blocks(system))
        }
        expect(record.cachedTokens).toBeLessThan(record.promptTokens)
        expect(record.cachedTokens % 16).toBe(0)
      }
      expect(hits).toBeGreaterThan(0)
    },
  )

  it('multi-turn, closed loop: each turn carries the real history and hits the previous turn', async () => {
    const [pod] = await fleet()
    const data = 'prompt_tokens=20,output_tokens=12,turns=3,prefix_count=1,prefix_tokens=64'
    const run = await runLiveBenchmark(
      options(pod?.url ?? '', data, { kind: 'concurrent', streams: 2 }, 6),
    )
    expect(run.records.map((r) => r.id).sort()).toEqual([
      'c0t0',
      'c0t1',
      'c0t2',
      'c1t0',
      'c1t1',
      'c1t2',
    ])
    for (const record of run.records) {
      expect(record.error).toBeNull()
      const expected = expectedPrompt(run, data, record.conversation, record.turn)
      expect(record.promptTokens).toBe(expected.promptTokens)
      expect(record.outputTokens).toBe(12)
      if (record.turn === 0) continue
      const previous = run.records.find(
        (r) => r.conversation === record.conversation && r.turn === record.turn - 1,
      )
      if (!previous) throw new Error('missing previous turn')
      expect(record.startMs).toBeGreaterThanOrEqual(previous.endMs)
      // The previous prompt and answer are cached, up to the answer's last token, which
      // was sampled but never fed back: whole blocks of prompt + output − 1 tokens.
      expect(record.cachedTokens).toBe(blocks(previous.promptTokens + previous.outputTokens - 1))
    }
  })

  it('multi-turn, open loop: conversations start on the schedule, turns follow answers', async () => {
    const [pod] = await fleet()
    const data = 'prompt_tokens=16,output_tokens=6,turns=2'
    const run = await runLiveBenchmark(
      options(pod?.url ?? '', data, { kind: 'poisson', rate: 50 }, 5),
    )
    expect(run.records).toHaveLength(5) // turns count as requests
    const conversations = new Set(run.records.map((r) => r.conversation))
    expect(conversations.size).toBeGreaterThanOrEqual(3)
    for (const record of run.records) {
      expect(record.error).toBeNull()
      expect(record.promptTokens).toBe(
        expectedPrompt(run, data, record.conversation, record.turn).promptTokens,
      )
      const previous = run.records.find(
        (r) => r.conversation === record.conversation && r.turn === record.turn - 1,
      )
      if (record.turn > 0)
        expect(record.startMs).toBeGreaterThanOrEqual(previous?.endMs ?? Number.NaN)
    }
  })

  it('through the scorer: the pod comes from the decision header', async () => {
    const pods = await fleet(2)
    const scorer = await startScorer(
      ScorerConfig.parse({
        port: 0,
        signingSecrets: [],
        allowUnsigned: true,
        pools: [{ name: 'default', spec: poolSpec() }],
        pods: pods.map((pod) => scorerPodOf(pod, 'default')),
      }),
      () => {},
    )
    cleanups.push(() => scorer.close())
    const run = await runLiveBenchmark(
      options(scorer.url, sharedPrefix, { kind: 'concurrent', streams: 2 }, 6, { pods: 2 }),
    )
    for (const record of run.records) {
      expect(record.error).toBeNull()
      expect(['sim-pod-0', 'sim-pod-1']).toContain(record.pod)
      expect(record.outputTokens).toBe(8)
    }
  })
})

describe('runLiveBenchmark failures become records', () => {
  async function closedPort(): Promise<number> {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    await new Promise((resolve) => server.close(resolve))
    return typeof address === 'object' && address !== null ? address.port : 0
  }

  it.each([
    ['poisson', { kind: 'poisson', rate: 100 }, 'prompt_tokens=8,output_tokens=4'],
    ['concurrent', { kind: 'concurrent', streams: 2 }, 'prompt_tokens=8,output_tokens=4,turns=3'],
  ] as const)(
    'an unreachable target gives error records (%s), not a throw',
    async (_, profile, data) => {
      const port = await closedPort()
      const run = await runLiveBenchmark(options(`http://127.0.0.1:${port}/`, data, profile, 5))
      expect(run.records).toHaveLength(5)
      for (const record of run.records) {
        expect(record.error).toMatch(/ECONNREFUSED/)
        expect(record).toMatchObject({ firstTokenMs: null, outputTokens: 0, turn: 0 })
      }
    },
  )

  it('an HTTP error is recorded with the server’s message', async () => {
    const [pod] = await fleet()
    const run = await runLiveBenchmark(
      options(pod?.url ?? '', sharedPrefix, { kind: 'concurrent', streams: 2 }, 3, {
        model: 'nope',
      }),
    )
    expect(run.records.map((r) => r.error)).toEqual(
      new Array(3).fill('HTTP 404: The model `nope` does not exist.'),
    )
  })

  it('a stalled stream times out into an error record that keeps the tokens seen', async () => {
    const [pod] = await fleet()
    pod?.setFaults({ stallAfterTokens: 2 })
    const run = await runLiveBenchmark(
      options(pod?.url ?? '', sharedPrefix, { kind: 'concurrent', streams: 2 }, 2, {
        timeoutMs: 300,
      }),
    )
    for (const record of run.records) {
      expect(record.error).toBe('timed out after 300 ms')
      expect(record.tokenTimesMs).toHaveLength(2)
      expect(record.endMs - record.startMs).toBeGreaterThanOrEqual(299)
    }
  })

  it('no model leaves the field out and the server picks its own', async () => {
    const [pod] = await fleet()
    const run = await runLiveBenchmark(
      options(pod?.url ?? '', sharedPrefix, { kind: 'synchronous' }, 2, { model: null }),
    )
    expect(run.records.map((r) => r.error)).toEqual([null, null])
    expect(run.config.rate).toBeNull()
    expect(run.config.profile).toBe('synchronous')
  })
})

describe('runLiveBenchmark options', () => {
  it('refuses a time scale or timeout out of range before sending anything', async () => {
    const cases: [Partial<LiveBenchmarkOptions>, string][] = [
      [{ timeScale: 0 }, 'live benchmark: timeScale must be a number > 0'],
      [{ timeoutMs: 2 ** 31 }, 'live benchmark: timeoutMs must be a number of ms in (0, 2^31)'],
    ]
    for (const [overrides, message] of cases) {
      await expect(
        runLiveBenchmark(
          options('http://127.0.0.1:1', sharedPrefix, { kind: 'synchronous' }, 1, overrides),
        ),
      ).rejects.toMatchObject({ code: 'invalid_config', message })
    }
  })
})
