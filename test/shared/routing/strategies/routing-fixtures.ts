import { expect } from 'vitest'
import { type BlockKeyChain, computeBlockKeys } from '../../../../shared/kv-index/block-keys.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import type {
  PodCandidate,
  PodLoad,
  RoutingContext,
  RoutingRequest,
  RoutingStrategy,
} from '../../../../shared/routing/routing-strategy.ts'

type PodOverrides = Partial<Omit<PodCandidate, 'load'>> & { load?: Partial<PodLoad> }

/** An idle, cold pod with fresh, empty metrics, unless told otherwise. */
export function pod(name: string, overrides: PodOverrides = {}): PodCandidate {
  const { load, ...rest } = overrides
  return {
    name,
    cachedBlocks: 0,
    trust: 'precise',
    metrics: { running: 0, waiting: 0, kvCacheUsage: 0, ageMs: 10 },
    ttft: { overheadMs: 20, msPerToken: 0.25 },
    memory: null,
    weight: 100,
    ...rest,
    load: {
      inFlight: 0,
      pendingRequests: 0,
      pendingPrefillTokens: 0,
      activeTokens: 0,
      ...load,
    },
  }
}

/**
 * Block keys (block size 16) of a prompt made of named segments of whole blocks: prompts that
 * start with the same segments share those blocks' keys, as the index would key them.
 */
export function blockKeys(...segments: [name: string, blocks: number][]): BlockKeyChain {
  const tokens: number[] = []
  for (const [name, blocks] of segments) {
    let base = 7
    for (const char of name) base = (base * 31 + (char.codePointAt(0) as number)) >>> 0
    for (let i = 0; i < blocks * 16; i++) tokens.push((base + i * 2_654_435_761) >>> 0)
  }
  return computeBlockKeys(tokens, 16, { model: 'qwen3' })
}

let requests = 0

export function request(overrides: Partial<RoutingRequest> = {}): RoutingRequest {
  requests++
  return {
    id: `r${requests}`,
    model: 'qwen3',
    promptTokens: 1000,
    blockSize: 16,
    promptText: 'x'.repeat(4000),
    maxTokens: 128,
    blockKeys: new Uint32Array(0),
    ...overrides,
  }
}

export function context(random: () => number = () => 0.5, nowMs = 0): RoutingContext {
  return { nowMs, random }
}

/** choose, then tell the strategy where the request went, as the scorer does. */
export function route(
  strategy: RoutingStrategy,
  routed: RoutingRequest,
  candidates: readonly PodCandidate[],
  ctx: RoutingContext = context(),
): string | null {
  const decision = strategy.choose(routed, candidates, ctx)
  const chosen = candidates.find((candidate) => candidate.name === decision.pod)
  if (chosen) strategy.onRouted?.(routed, chosen.name, ctx, chosen)
  return decision.pod
}

const names = ['pod-a', 'pod-b', 'pod-c', 'pod-d', 'pod-e']
const prefixes = ['system: you are a helpful assistant. ', 'context: '.repeat(40), 'q'.repeat(700)]

/**
 * A seeded sequence of decisions over random pools, prompts sharing a few prefixes, loads,
 * stale metrics, empty candidate lists, removed pods, and routed requests reaching their first
 * token and their end; returns each decision's pod and reason.
 */
export function runRandomScenario(strategy: RoutingStrategy, seed: number, steps = 300): string[] {
  const draw = createSeededRandom(seed)
  const int = (n: number) => Math.floor(draw() * n)
  const outcomes: string[] = []
  const live: string[] = []
  for (let step = 0; step < steps; step++) {
    const pool = names.filter(() => draw() < 0.8)
    const promptTokens = 1 + int(3000)
    const candidates = pool.map((name) =>
      pod(name, {
        cachedBlocks: int(Math.ceil(promptTokens / 16) + 2),
        metrics:
          draw() < 0.2
            ? null
            : { running: int(20), waiting: int(8), kvCacheUsage: draw(), ageMs: 5 },
        ttft: { overheadMs: 20, msPerToken: 0.05 + draw() * 0.3 },
        memory:
          draw() < 0.5
            ? null
            : {
                capacityTokens: 16 * (1 + int(20_000)),
                usedTokens: 0,
                pendingTokens: 0,
                stepMs: 30,
                msPerContextToken: 2e-4,
                releases: () => [],
              },
        load: {
          inFlight: int(60),
          pendingPrefillTokens: int(40_000),
          activeTokens: int(200_000),
        },
      }),
    )
    const prefix = int(prefixes.length)
    const prefixBlocks = Math.min(Math.floor(promptTokens / 16), 1 + int(60))
    const routed = request({
      id: `s${seed}-${step}`,
      model: draw() < 0.9 ? 'qwen3' : 'llama',
      promptTokens,
      promptText: (prefixes[prefix] as string) + 'u'.repeat(int(200)) + step,
      blockKeys: blockKeys(
        [`prefix-${prefix}`, prefixBlocks],
        [`tail-${step}`, Math.floor(promptTokens / 16) - prefixBlocks],
      ),
    })
    const ctx = context(draw, step * 997)
    const decision = strategy.choose(routed, candidates, ctx)
    expect(decision.scores.map((score) => score.pod)).toEqual(pool)
    if (decision.pod === null) {
      expect(candidates).toEqual([])
    } else {
      expect(pool).toContain(decision.pod)
      const chosen = candidates.find((candidate) => candidate.name === decision.pod) as PodCandidate
      strategy.onRouted?.(routed, decision.pod, ctx, chosen)
      live.push(routed.id)
    }
    if (live.length > 0 && draw() < 0.4) strategy.onFirstToken?.(live[int(live.length)] as string)
    if (live.length > 0 && draw() < 0.3)
      strategy.onReleased?.(live.splice(int(live.length), 1)[0] as string)
    if (draw() < 0.02) strategy.onPodRemoved?.(names[int(names.length)] as string)
    outcomes.push(`${decision.pod} ${decision.reason}`)
  }
  return outcomes
}

/** The properties every strategy has: candidates only, and the same seed gives the same run. */
export function expectSeededProperties(create: () => RoutingStrategy): void {
  for (const seed of [1, 2, 3]) {
    const first = runRandomScenario(create(), seed)
    expect(runRandomScenario(create(), seed)).toEqual(first)
  }
  expect(runRandomScenario(create(), 4)).not.toEqual(runRandomScenario(create(), 5))
}
