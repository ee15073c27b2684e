import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import type { ChaosClient, ChaosRequest, RequestOutcome } from './chaos-client.ts'
import { chaosModel } from './chaos-platform.ts'

export interface TrafficPlan {
  /** Requests in flight at once. */
  concurrency: number
  /** No more than this many requests in all. */
  maxRequests: number
  /** No request starts after this long. */
  durationMs: number
  /** The i-th request (seeded prompts: see chaosPrompts). */
  request: (i: number) => ChaosRequest
}

export interface TrafficRun {
  /** Resolves with every request's outcome, in the order they were sent. */
  readonly done: Promise<RequestOutcome[]>
  /** Requests started so far. */
  sent(): number
  /** No new request starts; those in flight finish. */
  stop(): void
}

/**
 * A closed loop of `concurrency` clients, each sending its next request when the last
 * ended, bounded in requests and in time: a scenario never runs open-ended.
 */
export function startTraffic(
  client: ChaosClient,
  plan: TrafficPlan,
  nowMs: () => number,
): TrafficRun {
  const outcomes: RequestOutcome[] = []
  const endsAt = nowMs() + plan.durationMs
  let next = 0
  let stopped = false
  const worker = async () => {
    while (!stopped && next < plan.maxRequests && nowMs() < endsAt) {
      const i = next++
      outcomes[i] = await client.send(plan.request(i))
    }
  }
  const done = Promise.all(Array.from({ length: plan.concurrency }, worker)).then(() => outcomes)
  return {
    done,
    sent: () => next,
    stop: () => {
      stopped = true
    },
  }
}

/**
 * Seeded chat prompts: `prefixes` shared system prompts of about `prefixWords` words,
 * each request one of them plus a question of its own, as a multi-tenant chat load is.
 */
export function chaosPrompts(options: {
  seed: number
  prefixes: number
  prefixWords: number
}): (i: number) => ChatCompletionMessageParam[] {
  const words = ['routing', 'cache', 'tensor', 'pool', 'token', 'prefix', 'latency', 'queue']
  const wordsOf = (seed: number, count: number) => {
    const random = createSeededRandom(seed)
    return Array.from({ length: count }, () => words[Math.floor(random() * words.length)])
  }
  const systems = Array.from({ length: options.prefixes }, (_, p) =>
    [`You are assistant ${p}.`, ...wordsOf(options.seed * 7_919 + p, options.prefixWords)].join(
      ' ',
    ),
  )
  // Each request's own words come from its index, so concurrency cannot reorder them.
  return (i) => [
    { role: 'system', content: systems[i % systems.length] ?? '' },
    {
      role: 'user',
      content: `Question ${i}: what does ${wordsOf(options.seed * 104_729 + i, 2).join(' ')} mean?`,
    },
  ]
}

/** A request of the chaos pool's model. */
export function chaosRequest(
  messages: ChatCompletionMessageParam[],
  options: Partial<Omit<ChaosRequest, 'messages'>> = {},
): ChaosRequest {
  return { model: chaosModel, messages, maxTokens: 16, stream: true, timeoutMs: 30_000, ...options }
}
