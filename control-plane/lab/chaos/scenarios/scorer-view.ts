import { z } from 'zod'
import { createRedisKvIndex } from '../../../kv-index/redis-kv-index.ts'
import type { ChaosClient, ChaosRequest, RequestOutcome } from '../chaos-client.ts'
import type { ChaosPart } from '../chaos-parts.ts'
import type { ChaosContext } from '../chaos-scenario.ts'
import type { ChaosStack } from '../chaos-stack.ts'

/** A pod as a scorer's GET /admin/pods reports it (the fields the pod scenarios read). */
export const AdminPod = z.object({
  name: z.string(),
  healthy: z.boolean(),
  indexReady: z.boolean(),
  trust: z.string(),
  drift: z.number(),
  driftObservations: z.number(),
  load: z.object({ inFlight: z.number(), pendingRequests: z.number() }),
  events: z
    .object({
      batches: z.number(),
      replays: z.number(),
      gaps: z.number(),
      restarts: z.number(),
      unrepairable: z.number(),
    })
    .nullable(),
})
export type AdminPod = z.infer<typeof AdminPod>

const PodsReport = z.object({ pools: z.array(z.object({ pods: z.array(AdminPod) })) })

/** Every pod of every pool, as the scorer sees them now. */
export async function scorerPods(stack: ChaosStack, scorer: ChaosPart): Promise<AdminPod[]> {
  const report = PodsReport.parse(await stack.admin(scorer, '/admin/pods'))
  return report.pools.flatMap((pool) => pool.pods)
}

export async function scorerPod(
  stack: ChaosStack,
  scorer: ChaosPart,
  name: string,
): Promise<AdminPod | undefined> {
  return (await scorerPods(stack, scorer)).find((pod) => pod.name === name)
}

/**
 * The blocks the shared index holds per pod, read from Redis as the scorers keep it (not
 * through the stack's cuttable proxy). Counted over the whole pod, not one prompt: the
 * edge salts each tenant's prompts, so a lookup without the tenant's salt matches nothing.
 */
export async function openIndexReader(context: ChaosContext, stack: ChaosStack) {
  const index = await createRedisKvIndex({ redis: context.redisUrl, prefix: stack.prefix })
  return {
    async blocks(pods: readonly string[]): Promise<Map<string, number>> {
      const counts = await index.storedBlocks(pods)
      return new Map(pods.map((pod, i) => [pod, counts[i] ?? 0]))
    },
    close: () => index.close(),
  }
}

/** A counter of a scorer's /metrics, summed over its labels (0 when absent). */
export async function scorerCounter(scorer: ChaosPart, name: string): Promise<number> {
  const response = await fetch(`${scorer.metricsUrl}/metrics`, {
    signal: AbortSignal.timeout(5_000),
  })
  const text = await response.text()
  let sum = 0
  for (const line of text.split('\n')) {
    const match = /^(\S+?)(?:\{[^}]*\})? (\S+)$/.exec(line)
    if (match && (match[1] === name || match[1] === `${name}_total`)) sum += Number(match[2])
  }
  return sum
}

/** An outcome with when its request was sent (ms on the scenario's clock). */
export interface TimedOutcome {
  sentAtMs: number
  request: ChaosRequest
  outcome: RequestOutcome
}

/** The client, noting when each request was sent and how it ended. */
export function timedClient(
  client: ChaosClient,
  nowMs: () => number,
): { client: ChaosClient; outcomes: TimedOutcome[] } {
  const outcomes: TimedOutcome[] = []
  return {
    outcomes,
    client: {
      async send(request: ChaosRequest) {
        const sentAtMs = nowMs()
        const outcome = await client.send(request)
        outcomes.push({ sentAtMs, request, outcome })
        return outcome
      },
    },
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`no ${what}`)
  return value
}
