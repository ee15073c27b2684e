import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions'
import { createRedisStateStore } from '../../../state/redis-state-store.ts'
import type { RequestOutcome } from '../chaos-client.ts'
import { chaosBedrockModel } from '../chaos-platform.ts'
import type { ChaosScenario } from '../chaos-scenario.ts'
import { timeUntil } from '../chaos-scenario.ts'
import { type ChaosStack, withChaosStack } from '../chaos-stack.ts'
import { chaosPrompts, chaosRequest, startTraffic } from '../chaos-traffic.ts'
import { percentile, type ScenarioCheck, tallyOutcomes } from '../scenario-result.ts'
import {
  counterTotal,
  decisionsLoggedSince,
  hitRate,
  indexedAgain,
  indexedBlocks,
  percent,
} from './redis-outage-probes.ts'

/** Personal data the edge labels pii (pii:email, pii:phone): it must never reach Bedrock. */
const piiEmail = 'jane.doe.chaos@example.com'
const piiPhone = '+1 415 555 0134'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Scenario 6: Redis (the scorer's KV index and state, the edge's quotas) cut under steady
 * traffic on shared prefixes. The scorer routes on load alone meanwhile (measured: the hit
 * rate before, during and after); the FailOpen tenant is served on the edge's local
 * bucket, the FailClose tenant gets 503 with Retry-After; PII requests stay local; when
 * Redis returns, the index is replayed from the pods and state writes resume.
 */
export const redisUnavailable: ChaosScenario = {
  id: 'redis-unavailable',
  title: '6. Redis unavailable under load',
  async run(context) {
    const full = context.size === 'full'
    const timing = full
      ? { warmMs: 12_000, outageMs: 10_000, afterMs: 12_000 }
      : { warmMs: 4_000, outageMs: 4_000, afterMs: 4_000 }
    return withChaosStack(context, {}, async (stack) => {
      // Read past the proxy, on the real Redis: what the scorer wrote, whatever the cut.
      const state = await createRedisStateStore({ redis: context.redisUrl, prefix: stack.prefix })
      try {
        return await outageUnderLoad(stack, state, context.nowMs, timing, full)
      } finally {
        await state.close()
      }
    })
  },
}

async function outageUnderLoad(
  stack: ChaosStack,
  state: Awaited<ReturnType<typeof createRedisStateStore>>,
  nowMs: () => number,
  timing: { warmMs: number; outageMs: number; afterMs: number },
  full: boolean,
) {
  const scorer = stack.scorers[0]
  if (!scorer) throw new Error('no scorer')
  const prefixes = full ? 24 : 12
  const prompts = chaosPrompts({ seed: 6, prefixes, prefixWords: 300 })
  const main = stack.client()
  const closedTenant = [...stack.keys.keys()].find((name) => name.endsWith('-closed')) ?? ''
  const closed = stack.client(stack.keys.get(closedTenant))
  const started = nowMs()
  const traffic = startTraffic(
    main,
    {
      concurrency: full ? 12 : 6,
      maxRequests: full ? 20_000 : 4_000,
      durationMs: timing.warmMs + timing.outageMs + timing.afterMs,
      request: (i) => chaosRequest(prompts(i), { maxTokens: 12 }),
    },
    nowMs,
  )
  // Bedrock answers in this stack: a PII request sent there would be seen.
  const bedrockProbe = await main.send({
    ...chaosRequest([{ role: 'user', content: 'Say hello.' }], { maxTokens: 8 }),
    model: chaosBedrockModel,
  })
  await sleep(timing.warmMs)
  const indexedBefore = (await indexedBlocks(state)) ?? new Map<string, number>()
  const coldBefore = await counterTotal(scorer, 'kinference_scorer_index_cold_lookups_total')
  const cutAt = nowMs()
  await stack.redis.stop()
  const endsAt = cutAt + timing.outageMs
  const spread = Math.max(200, timing.outageMs / 10)
  const piiRun = paced(spread, endsAt, nowMs, () => main.send(piiRequest()))
  const closedRun = paced(spread, endsAt, nowMs, () =>
    closed.send(chaosRequest(prompts(7), { maxTokens: 8 })),
  )
  await sleep(Math.max(0, endsAt - nowMs()))
  const restoredAt = nowMs()
  const restoredWallMs = Date.now()
  await stack.redis.start()
  // The index counts as replayed once the scorer's pod view, written since, shows every
  // pod with at least the blocks it had before the cut; decisions are logged again.
  const [indexMs, stateMs] = await Promise.all([
    timeUntil(() => indexedAgain(state, indexedBefore, restoredWallMs), {
      limitMs: 30_000,
      everyMs: 100,
      nowMs,
    }),
    timeUntil(() => decisionsLoggedSince(state, restoredWallMs), {
      limitMs: 30_000,
      everyMs: 100,
      nowMs,
    }),
  ])
  const outcomes = await traffic.done
  const [piiOutcomes, closedDuring] = await Promise.all([piiRun, closedRun])
  const closedAfter = await closed.send(chaosRequest(prompts(8), { maxTokens: 8 }))
  const phase = (from: number, to: number) =>
    outcomes.filter((o) => o.startedMs >= from && o.startedMs < to)
  const before = phase(started + timing.warmMs / 3, cutAt)
  const cut = phase(cutAt, restoredAt)
  const settled = restoredAt + Math.max(indexMs ?? 0, stateMs ?? 0)
  const after = phase(settled, Number.POSITIVE_INFINITY)
  const rates = { before: hitRate(before), during: hitRate(cut), after: hitRate(after) }
  const cost =
    rates.before.rate === null || rates.during.rate === null
      ? null
      : rates.before.rate - rates.during.rate
  const coldDuring =
    (await counterTotal(scorer, 'kinference_scorer_index_cold_lookups_total')) - coldBefore
  const leaked = stack.bedrock.requests.filter((request) => {
    const body = JSON.stringify(request.body)
    return body.includes(piiEmail) || body.includes(piiPhone)
  })
  const convergedMs = indexMs === null || stateMs === null ? null : Math.max(indexMs, stateMs)
  const latency = (list: RequestOutcome[]) =>
    percentile(
      list.filter((o) => o.kind === 'completed').map((o) => o.latencyMs),
      50,
    )
  return {
    ...tallyOutcomes([bedrockProbe, ...outcomes, ...piiOutcomes, ...closedDuring, closedAfter]),
    convergence: {
      what: 'index replayed and state written after Redis returned',
      ms: convergedMs,
      targetMs: 5_000,
    },
    checks: checksOf({
      cut,
      piiOutcomes,
      leaked,
      bedrockProbe,
      closedDuring,
      closedAfter,
      coldDuring,
    }),
    notes: [
      `Redis cut for ${Math.round(restoredAt - cutAt)} ms; ${cut.length} requests of the FailOpen tenant started meanwhile`,
      `hit rate (cached / prompt tokens): before ${percent(rates.before.rate)} (${rates.before.requests} requests), during ${percent(rates.during.rate)} (${rates.during.requests}), after ${percent(rates.after.rate)} (${rates.after.requests}); cost of the outage ${cost === null ? 'n/a' : `${(cost * 100).toFixed(1)} points`}`,
      `median latency before ${fmt(latency(before))}, during ${fmt(latency(cut))}, after ${fmt(latency(after))}`,
      `lookups routed cache-cold during the cut: ${coldDuring}`,
      `blocks indexed per pod before the cut: ${[...indexedBefore.values()].join(', ')}`,
      `after Redis returned: index replayed (and pod view written) in ${fmt(indexMs)}, decisions logged again in ${fmt(stateMs)}`,
      `decision log entries dropped in all: ${await counterTotal(scorer, 'kinference_scorer_decision_log_dropped_total')}`,
      `Bedrock calls in all: ${stack.bedrock.requests.length} (one a check that Bedrock answers)`,
    ],
  }
}

const fmt = (ms: number | null) => (ms === null ? 'never' : `${Math.round(ms)} ms`)

function checksOf(seen: {
  cut: RequestOutcome[]
  piiOutcomes: RequestOutcome[]
  leaked: unknown[]
  bedrockProbe: RequestOutcome
  closedDuring: RequestOutcome[]
  closedAfter: RequestOutcome
  coldDuring: number
}): ScenarioCheck[] {
  const { cut, piiOutcomes, closedDuring, closedAfter } = seen
  const served = cut.filter((o) => o.kind === 'completed').length
  const closedRefused = closedDuring.filter(
    (o) => o.kind === 'clean-error' && o.status === 503 && o.retryAfter !== null,
  ).length
  const piiServed = piiOutcomes.filter((o) => o.kind === 'completed').length
  return [
    {
      name: 'the scorer keeps routing without Redis (FailOpen tenant served)',
      ok: cut.length > 0 && served === cut.length,
      detail: `${served} of ${cut.length} requests started during the cut completed`,
    },
    {
      name: 'routing during the cut is load-only: lookups answered cache-cold',
      ok: seen.coldDuring >= served,
      detail: `${seen.coldDuring} cold lookups for ${served} requests served`,
    },
    {
      name: 'no PII request reached Bedrock',
      ok: seen.leaked.length === 0 && seen.bedrockProbe.kind === 'completed',
      detail: `${seen.leaked.length} Bedrock calls carried the PII (Bedrock itself answered: ${kinds([seen.bedrockProbe])}); ${piiServed} of ${piiOutcomes.length} PII requests served in the cluster`,
    },
    {
      name: 'the FailClose tenant gets 503 with Retry-After during the cut',
      ok: closedDuring.length > 0 && closedRefused === closedDuring.length,
      detail: `${closedDuring.length} requests: ${kinds(closedDuring)}`,
    },
    {
      name: 'the FailClose tenant is served again once Redis is back',
      ok: closedAfter.kind === 'completed',
      detail: kinds([closedAfter]),
    },
  ]
}

/** Outcomes by kind, status, code and Retry-After, with counts. */
function kinds(outcomes: readonly RequestOutcome[]): string {
  const counts = new Map<string, number>()
  for (const o of outcomes) {
    const key =
      o.kind === 'clean-error'
        ? `${o.status} ${o.code}${o.retryAfter === null ? '' : ` retry-after ${o.retryAfter}`}`
        : o.kind
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return [...counts].map(([key, n]) => `${key} ×${n}`).join(', ')
}

/** A chat the edge labels pii (an e-mail address and a phone number). */
function piiRequest() {
  const messages: ChatCompletionMessageParam[] = [
    {
      role: 'user',
      content: `Please write to ${piiEmail} or call ${piiPhone} about my order.`,
    },
  ]
  return chaosRequest(messages, { maxTokens: 8, timeoutMs: 30_000 })
}

/** Calls of `send` one after another, `everyMs` apart, none started after `untilMs`. */
async function paced(
  everyMs: number,
  untilMs: number,
  nowMs: () => number,
  send: () => Promise<RequestOutcome>,
): Promise<RequestOutcome[]> {
  const outcomes: RequestOutcome[] = []
  while (nowMs() < untilMs) {
    outcomes.push(await send())
    await sleep(everyMs)
  }
  return outcomes
}
