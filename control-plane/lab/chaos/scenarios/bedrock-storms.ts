import type { FakeBedrockRequest } from '../../bedrock-stand-in/start-fake-bedrock.ts'
import type { RequestOutcome } from '../chaos-client.ts'
import { chaosBedrockModel, chaosBedrockTimeoutMs } from '../chaos-platform.ts'
import type { ChaosScenario } from '../chaos-scenario.ts'
import { type ChaosStack, startChaosStack } from '../chaos-stack.ts'
import { startTraffic } from '../chaos-traffic.ts'
import { percentile, type ScenarioCheck, tallyOutcomes } from '../scenario-result.ts'

/** One stretch of Bedrock's behaviour, and what every client must see during it. */
interface Phase {
  name: string
  /** Fake Bedrock faults for every call (fake-bedrock-fault.ts). */
  faults: string[]
  /**
   * The answer every request gets: completed, or a clean error with this status; 'mostly':
   * completed or 429 with Retry-After (retries absorb what the retry budget lets them).
   */
  expect: 'completed' | 'mostly' | 429 | 503 | 502
}

const phases: readonly Phase[] = [
  { name: 'throttling (429 ThrottlingException)', faults: ['throttle'], expect: 429 },
  { name: '5xx storm (503 ServiceUnavailable)', faults: ['unavailable'], expect: 503 },
  { name: '5xx storm (500 InternalServerException)', faults: ['internal'], expect: 503 },
  { name: 'one call in two throttled', faults: ['throttle-every:2'], expect: 'mostly' },
  { name: 'slower than the provider timeout', faults: ['delay:60000'], expect: 503 },
  { name: 'not retryable (403 AccessDenied)', faults: ['access-denied'], expect: 502 },
  { name: 'recovered', faults: [], expect: 'completed' },
]

/** Retries of the edge before it answers: attempts per request at most. */
const maxAttempts = 3

/**
 * Scenario 7: Bedrock throttling, failing with 5xx, slow, refusing; on the Bedrock-only
 * model, streamed and not. Every request ends as 429 or 503 with Retry-After (502 for an
 * error not worth retrying), an OpenAI-shaped body, within the provider's timeout; the
 * edge's attempts per request stay bounded (counted on the fake's side).
 */
export const bedrockStorms: ChaosScenario = {
  id: 'bedrock-storms',
  title: '7. Bedrock throttling and 5xx storms',
  async run(context) {
    const full = context.size === 'full'
    const stack = await startChaosStack({
      redisUrl: context.redisUrl,
      pods: 1,
      scorers: 1,
      timeScale: 1,
      seed: context.seed,
    })
    try {
      const all: RequestOutcome[] = []
      const checks: ScenarioCheck[] = []
      const notes: string[] = []
      const attempts: number[] = []
      let next = 0
      for (const phase of phases) {
        const seen = await runPhase(stack, phase, {
          first: next,
          concurrency: full ? 8 : 4,
          durationMs: full ? 6_000 : 1_000,
          nowMs: context.nowMs,
        })
        next += seen.outcomes.length
        all.push(...seen.outcomes)
        attempts.push(...seen.attempts)
        checks.push(phaseCheck(phase, seen.outcomes))
        notes.push(phaseNote(phase, seen))
      }
      const worst = Math.max(0, ...all.map((o) => o.latencyMs))
      const most = Math.max(0, ...attempts)
      checks.push({
        name: `retries are bounded: at most ${maxAttempts} Bedrock calls per request`,
        ok: most <= maxAttempts && attempts.every((n) => n >= 1),
        detail: `${attempts.reduce((sum, n) => sum + n, 0)} calls for ${attempts.length} requests, at most ${most} for one`,
      })
      checks.push({
        name: `no request waits past the provider timeout (${chaosBedrockTimeoutMs} ms) by much`,
        ok: worst < chaosBedrockTimeoutMs + 2_000,
        detail: `slowest answer ${Math.round(worst)} ms`,
      })
      return { ...tallyOutcomes(all), convergence: null, checks, notes }
    } finally {
      stack.bedrock.setFaults([])
      await stack.close()
    }
  },
}

interface PhaseRun {
  outcomes: RequestOutcome[]
  /** Bedrock calls per request (the fake's records, matched by each prompt's own tag). */
  attempts: number[]
}

async function runPhase(
  stack: ChaosStack,
  phase: Phase,
  options: { first: number; concurrency: number; durationMs: number; nowMs: () => number },
): Promise<PhaseRun> {
  const calls = stack.bedrock.requests.length
  stack.bedrock.setFaults(phase.faults)
  const tag = (i: number) => `chaos-request-${options.first + i}`
  const traffic = startTraffic(
    stack.client(),
    {
      concurrency: options.concurrency,
      maxRequests: 10_000,
      durationMs: options.durationMs,
      request: (i) => ({
        model: chaosBedrockModel,
        messages: [{ role: 'user', content: `${tag(i)}: say something short.` }],
        maxTokens: 16,
        stream: i % 2 === 1,
        timeoutMs: 30_000,
      }),
    },
    options.nowMs,
  )
  const outcomes = await traffic.done
  stack.bedrock.setFaults([])
  const made = stack.bedrock.requests.slice(calls)
  return { outcomes, attempts: outcomes.map((_, i) => callsTagged(made, `${tag(i)}:`)) }
}

function callsTagged(calls: readonly FakeBedrockRequest[], tag: string): number {
  return calls.filter((call) => JSON.stringify(call.body).includes(tag)).length
}

function phaseCheck(phase: Phase, outcomes: readonly RequestOutcome[]): ScenarioCheck {
  const completed = outcomes.filter((o) => o.kind === 'completed').length
  const refused = (status: number) =>
    outcomes.filter(
      (o) =>
        o.kind === 'clean-error' &&
        o.status === status &&
        (status === 502 || o.retryAfter !== null),
    ).length
  const { expect } = phase
  const [ok, what] =
    expect === 'completed'
      ? [completed === outcomes.length, 'completed']
      : expect === 'mostly'
        ? [completed + refused(429) === outcomes.length, 'completed, or 429 with Retry-After']
        : [
            refused(expect) === outcomes.length,
            `${expect}${expect === 502 ? '' : ' with Retry-After'}`,
          ]
  return {
    name: `${phase.name}: every request ${what}`,
    ok: outcomes.length > 0 && ok,
    detail: `${outcomes.length} requests (${Math.round((100 * completed) / Math.max(1, outcomes.length))} % completed): ${answers(outcomes)}`,
  }
}

function phaseNote(phase: Phase, run: PhaseRun): string {
  const { outcomes, attempts } = run
  const mean = attempts.reduce((sum, n) => sum + n, 0) / Math.max(1, attempts.length)
  const latency = outcomes.map((o) => o.latencyMs)
  const streamed = outcomes.filter((_, i) => i % 2 === 1)
  return `${phase.name}: ${outcomes.length} requests (${streamed.length} streamed), Bedrock calls per request mean ${mean.toFixed(2)}, max ${Math.max(0, ...attempts)} (bound ${maxAttempts}); latency p50 ${Math.round(percentile(latency, 50) ?? 0)} ms, max ${Math.round(Math.max(0, ...latency))} ms; ${answers(outcomes)}`
}

/** Outcomes by kind, status, code and Retry-After, with counts. */
function answers(outcomes: readonly RequestOutcome[]): string {
  const counts = new Map<string, number>()
  for (const o of outcomes) {
    const key =
      o.kind === 'clean-error'
        ? `${o.status} ${o.code}${o.retryAfter === null ? '' : ` retry-after ${o.retryAfter}`}`
        : o.kind === 'lost'
          ? `lost (${o.why})`
          : 'completed'
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return [...counts].map(([key, n]) => `${key} ×${n}`).join(', ')
}
