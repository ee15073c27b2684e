import { z } from 'zod'
import { parseOptions } from '../../../../shared/config/parse-options.ts'
import { ServiceLevel } from '../../../../shared/crd/service-level.ts'
import { judgeObjective } from '../../../../shared/policy/apply-service-level.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import {
  type AdmissionGate,
  type PoolPrediction,
  peerAdmissionGate,
  type RouteResult,
  type RoutingRequest,
} from '../../../../shared/routing/pool-router.ts'
import type { RequestRecord } from '../request-record.ts'
import { ProviderModel, ProviderModelOptions } from './provider-model.ts'

const fraction = z
  .number({ error: 'must be a fraction from 0 to 1' })
  .min(0, { error: 'must be a fraction from 0 to 1' })
  .max(1, { error: 'must be a fraction from 0 to 1' })

/**
 * Admission in a DES run, as a policy and the pool's router would apply it: every request
 * carries the TTFT objective `sloTtftMs`. kinference judges it on its predicted TTFT (the
 * rule's serviceLevel: Shed, or BurstOrShed with bursting); a peer applies its own
 * admission (peerAdmissionGate: llm-d's flow control, Dynamo's busy threshold; none for
 * the others). With bursting, what the pool refuses goes to the provider, unless it
 * carries personal data, which never leaves.
 */
export const DesAdmissionOptions = z.strictObject({
  sloTtftMs: z
    .int({ error: 'must be a whole number of ms > 0' })
    .positive({ error: 'must be a whole number of ms > 0' })
    .default(2_000),
  sloTpotMs: z
    .number({ error: 'must be a number of ms > 0' })
    .positive({ error: 'must be a number of ms > 0' })
    .optional()
    .describe('Every request also carries this time-per-output-token objective'),
  gate: z
    .enum(['own', 'none'])
    .default('own')
    .describe(
      "own: kinference's objective, each peer's own admission; none: every request admitted",
    ),
  burst: z.boolean().default(false).describe('Refused requests go to the provider'),
  hold: z
    .boolean()
    .default(false)
    .describe(
      "kinference holds what its pods cannot start now, in token-fair order, until its objective's deadline (its wait there counts in its predicted TTFT)",
    ),
  piiShare: fraction.default(0).describe('Share of requests that carry personal data'),
  provider: ProviderModelOptions.prefault({}),
  tenants: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        weight: z.number().positive({ error: 'must be a weight > 0' }),
      }),
    )
    .default([])
    .describe("Tenants and their shares of the conversations; none: one tenant's traffic"),
})
export type DesAdmissionOptions = z.infer<typeof DesAdmissionOptions>
export type DesAdmissionOptionsInput = z.input<typeof DesAdmissionOptions>

/** The pod a record names when the provider served it. */
export const providerPod = 'provider'

/** Where an arriving request goes: to the pool (held until `deadlineMs` at most), the provider, or nowhere. */
export type AdmissionStep =
  | { kind: 'local'; deadlineMs: number | null }
  | { kind: 'provider'; firstTokenMs: number; endMs: number }
  | { kind: 'refused'; status: number; code: string }

/** What admission knows of an arriving request: its route now and the pool's prediction. */
export interface Arriving {
  route: RouteResult
  request: RoutingRequest
  /** PoolRouter.prediction: the held wait included; null without a pod. */
  predicted: PoolPrediction | null
  nowMs: number
}

/** Who refuses for a strategy: its own gate, kinference's objective, or nobody. */
type Refuser = (arriving: Arriving) => { status: number; code: string } | null

export class DesAdmission {
  readonly options: DesAdmissionOptions
  private readonly refuse: Refuser
  private readonly provider: ProviderModel
  private readonly piiRandom: () => number
  private readonly seed: number
  /** kinference holds, in fair order, until the objective's deadline. */
  readonly holds: boolean

  constructor(
    input: DesAdmissionOptionsInput,
    strategy: string,
    seed: number,
    random: () => number,
  ) {
    this.options = parseOptions(DesAdmissionOptions, input, 'des admission')
    this.seed = seed
    this.holds = this.options.hold && this.options.gate === 'own' && strategy === 'kinference'
    this.refuse = this.refuserFor(strategy, random)
    this.provider = new ProviderModel(this.options.provider, random)
    this.piiRandom = random
  }

  /** The route's pod is the router's choice; `outputTokens` what a burst may write. */
  decide(arriving: Arriving, outputTokens: number): AdmissionStep {
    const refused = this.refuse(arriving)
    if (refused === null) return { kind: 'local', deadlineMs: this.deadlineOf(arriving) }
    return this.elsewhere(refused, arriving.request, arriving.nowMs, outputTokens)
  }

  /** A held request's deadline came: it is refused, or burst, as a refusal on arrival. */
  expired(request: RoutingRequest, nowMs: number, outputTokens: number): AdmissionStep {
    const refused = { status: 429, code: 'slo_unattainable' }
    const step = this.elsewhere(refused, request, nowMs, outputTokens)
    // A throttled burst after the hold: too late for the pool as well.
    return step.kind === 'local' ? { kind: 'refused', ...refused } : step
  }

  private elsewhere(
    refused: { status: number; code: string },
    request: RoutingRequest,
    nowMs: number,
    outputTokens: number,
  ): AdmissionStep {
    const pii = this.options.piiShare > 0 && this.piiRandom() < this.options.piiShare
    if (!this.options.burst || pii) return { kind: 'refused', ...refused }
    const answer = this.provider.send(nowMs, request.promptTokens, outputTokens)
    // A throttled burst falls back to the pool, the edge's last resort (its next attempt).
    if (answer.kind === 'throttled') return { kind: 'local', deadlineMs: null }
    return { kind: 'provider', firstTokenMs: answer.firstTokenMs, endMs: answer.endMs }
  }

  /**
   * With holding, the latest time the request may still go to a pod: its objective less
   * what its pod is predicted to take once it starts it.
   */
  private deadlineOf({ route, nowMs }: Arriving): number | null {
    if (!this.holds) return null
    const pod = route.decision.pod
    const startMs = pod === null ? 0 : (route.predictedTtftMs.get(pod) ?? 0)
    return nowMs + Math.max(0, this.options.sloTtftMs - startMs)
  }

  /**
   * The tenant of a conversation, drawn by weight from the seed and the conversation alone,
   * so it is the same whatever else the run draws; null without tenants.
   */
  tenantOf(conversation: number): string | null {
    const { tenants } = this.options
    if (tenants.length === 0) return null
    const total = tenants.reduce((sum, t) => sum + t.weight, 0)
    let draw =
      createSeededRandom((this.seed ^ Math.imul(conversation + 1, 0x9e3779b1)) >>> 0)() * total
    for (const tenant of tenants) {
      draw -= tenant.weight
      if (draw < 0) return tenant.name
    }
    return (tenants.at(-1) as (typeof tenants)[number]).name
  }

  private refuserFor(strategy: string, random: () => number): Refuser {
    if (this.options.gate === 'none') return () => null
    if (strategy === 'kinference') {
      const { sloTtftMs, sloTpotMs } = this.options
      const level = ServiceLevel.parse({
        ttftMs: sloTtftMs,
        ...(sloTpotMs !== undefined ? { tpotMs: Math.ceil(sloTpotMs) } : {}),
        whenUnattainable: 'Shed',
      })
      return ({ predicted }) => {
        const verdict = judgeObjective(level, undefined, predicted)
        return verdict.kind === 'missed' ? { status: 429, code: verdict.shed.code } : null
      }
    }
    const gate: AdmissionGate | null = peerAdmissionGate(strategy)
    if (gate === null) return () => null
    return ({ route, request, nowMs }) => {
      const verdict = gate.admit(route, request, nowMs, random)
      return verdict.kind === 'refuse' ? { status: verdict.status, code: verdict.code } : null
    }
  }
}

/** The record of a request the pool refused: an error at once, no token. */
export function refusedRecord(
  base: RequestRecord,
  step: { status: number; code: string },
): RequestRecord {
  return { ...base, endMs: base.startMs, error: `${step.status} ${step.code}` }
}

/** The record of a request the provider served: its tokens evenly over its answer. */
export function providerRecord(
  base: RequestRecord,
  step: { firstTokenMs: number; endMs: number },
  outputTokens: number,
): RequestRecord {
  const span = step.endMs - step.firstTokenMs
  const tokenTimesMs = Array.from({ length: outputTokens }, (_, i) =>
    outputTokens > 1 ? step.firstTokenMs + (span * i) / (outputTokens - 1) : step.firstTokenMs,
  )
  return {
    ...base,
    firstTokenMs: step.firstTokenMs,
    tokenTimesMs,
    endMs: step.endMs,
    outputTokens,
    pod: providerPod,
  }
}
