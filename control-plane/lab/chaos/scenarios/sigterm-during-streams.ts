import type { RequestOutcome } from '../chaos-client.ts'
import type { ChaosPart } from '../chaos-parts.ts'
import { timeUntil } from '../chaos-scenario.ts'
import type { ChaosStack } from '../chaos-stack.ts'
import { chaosPrompts, chaosRequest, startTraffic } from '../chaos-traffic.ts'
import type { ScenarioCheck } from '../scenario-result.ts'
import { connectionRefused } from './process-probes.ts'

export interface SigtermPhase {
  /** The long streams in flight at SIGTERM, then the ordinary traffic during the drain. */
  outcomes: RequestOutcome[]
  checks: ScenarioCheck[]
  notes: string[]
}

/**
 * Long streams through the edge, each past its first token, then SIGTERM to `part`. The
 * streams must all finish whole; a new connection to the part must be refused while it
 * drains; it must exit 0. With `alongside`, short requests keep coming through the edge
 * during the drain and must all be served (by the other scorer).
 */
export async function sigtermDuringStreams(
  stack: ChaosStack,
  part: ChaosPart,
  options: {
    streams: number
    maxTokens: number
    alongside: boolean
    seed: number
    nowMs: () => number
  },
): Promise<SigtermPhase> {
  const { nowMs } = options
  const client = stack.client()
  const prompts = chaosPrompts({ seed: options.seed, prefixes: 4, prefixWords: 80 })
  let started = 0
  const streams = Array.from({ length: options.streams }, (_, i) => {
    let seen = false
    return client.send(
      chaosRequest(prompts(i), {
        maxTokens: options.maxTokens,
        timeoutMs: 60_000,
        onEvent: () => {
          if (!seen) started++
          seen = true
        },
      }),
    )
  })
  const allStarted = await timeUntil(async () => started === options.streams, {
    limitMs: 20_000,
    nowMs,
  })
  const alongside = options.alongside
    ? startTraffic(
        client,
        {
          concurrency: 4,
          maxRequests: 10_000,
          durationMs: 60_000,
          request: (i) => chaosRequest(prompts(1_000 + i), { maxTokens: 8, timeoutMs: 30_000 }),
        },
        nowMs,
      )
    : null
  const signalled = nowMs()
  let exited = false
  const exit = part.stop('SIGTERM').then((code) => {
    exited = true
    return { code, ms: nowMs() - signalled }
  })
  const refusedMs = await timeUntil(async () => !exited && (await connectionRefused(part.url)), {
    limitMs: 5_000,
    everyMs: 20,
    nowMs,
  })
  const inFlight = await Promise.all(streams)
  const { code, ms } = await exit
  alongside?.stop()
  const during = (await alongside?.done) ?? []
  const whole = inFlight.filter((o) => o.kind === 'completed').length
  const lastEnd = Math.max(...inFlight.map((o) => o.startedMs + o.latencyMs)) - signalled
  return {
    outcomes: [...inFlight, ...during],
    checks: [
      {
        name: `${part.name}: every stream in flight at SIGTERM finishes whole`,
        ok: allStarted !== null && whole === inFlight.length,
        detail: `${whole} of ${inFlight.length} streams (all past their first token: ${allStarted !== null}) completed; the last ended ${lastEnd.toFixed(0)} ms after SIGTERM`,
      },
      {
        name: `${part.name}: new connections refused while it drains`,
        ok: refusedMs !== null,
        detail:
          refusedMs === null
            ? 'a new connection was accepted, or it exited first'
            : `refused ${refusedMs.toFixed(0)} ms after SIGTERM, before it exited`,
      },
      {
        name: `${part.name}: exits 0 once its streams are done`,
        ok: code === 0,
        detail: `exit code ${code}, ${ms.toFixed(0)} ms after SIGTERM`,
      },
      ...(alongside
        ? [
            {
              name: `${part.name}: requests sent during its drain are served`,
              ok: during.length > 0 && during.every((o) => o.kind === 'completed'),
              detail: `${during.filter((o) => o.kind === 'completed').length} of ${during.length} completed`,
            },
          ]
        : []),
    ],
    notes: [
      `${part.name}: SIGTERM with ${inFlight.length} streams in flight; exit ${code} after ${ms.toFixed(0)} ms (the last stream ended at ${lastEnd.toFixed(0)} ms)`,
    ],
  }
}
