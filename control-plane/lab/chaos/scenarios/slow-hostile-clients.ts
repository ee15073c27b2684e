import type { ChaosPart } from '../chaos-parts.ts'
import type { ChaosScenario } from '../chaos-scenario.ts'
import { timeUntil } from '../chaos-scenario.ts'
import { startChaosStack } from '../chaos-stack.ts'
import { chaosPrompts, chaosRequest, startTraffic } from '../chaos-traffic.ts'
import { percentile, type ScenarioCheck, tallyOutcomes } from '../scenario-result.ts'
import { type HostileConnection, neverReads, slowloris, tricklingBody } from './hostile-clients.ts'
import { heldConnections, mib, residentBytes, startSampler } from './process-probes.ts'

const plans = {
  full: { slowloris: 1_000, trickling: 200, neverRead: 50, scorerSlowloris: 200 },
  short: { slowloris: 100, trickling: 20, neverRead: 6, scorerSlowloris: 20 },
}
type Plan = (typeof plans)['short']

/**
 * The edge's limits: the full run keeps the product's defaults, the short one shortens
 * them to fit CI. The scorer keeps its defaults (headers within 10 s) in both.
 */
const edgeLimits = {
  full: { headersMs: 10_000, requestMs: 60_000, writeStallMs: 60_000, fillMs: 45_000 },
  short: { headersMs: 5_000, requestMs: 8_000, writeStallMs: 5_000, fillMs: 20_000 },
}
type Limits = (typeof edgeLimits)['short']
/** A never-reader is cut once the loopback's buffers are full (`fillMs`), then the stall. */
const windowOf = (limits: Limits) =>
  Math.max(limits.requestMs, limits.writeStallMs + limits.fillMs, 10_000) + 3_000
/**
 * The edge's growth allowed: its heap grows with the bytes it relays (the never-read
 * streams' included) and each open connection costs tens of KiB; what it must not do is
 * hold the streams nobody reads.
 */
const memoryBudgetBytes = 512 * 2 ** 20

interface Tracked {
  connection: HostileConnection
  part: ChaosPart
  openedMs: number
  /** When the part no longer held it (ms after it opened). */
  cutAfterMs: number | null
  /** When it was first seen missing: /proc/net/tcp read while it changes can skip a line. */
  missingSinceMs: number | null
}

/**
 * Scenario 8: raw sockets against the edge (and the scorer's port): slowloris headers, a
 * body trickling in, streaming requests whose reader never reads, with ordinary traffic
 * alongside. Each hostile connection must be cut by the server's own timeouts; the edge's
 * memory stays bounded; its connections return to their baseline; nothing ordinary is lost.
 */
export const slowHostileClients: ChaosScenario = {
  id: 'slow-hostile-clients',
  title: '8. slow and hostile clients',
  async run(context) {
    const plan = plans[context.size]
    const limits = edgeLimits[context.size]
    const stack = await startChaosStack({
      redisUrl: context.redisUrl,
      pods: 2,
      scorers: 1,
      // Fast pods: a reader that never reads must fill the loopback's buffers (about 4 MB)
      // within seconds for the edge to feel it.
      timeScale: 500,
      seed: context.seed,
      edgeArgs: edgeLimitArgs(limits),
    })
    try {
      const scorer = stack.scorers[0]
      if (!scorer) throw new Error('no scorer')
      const { nowMs } = context
      const edgePid = stack.edge.process.child.pid ?? 0
      const held = (part: ChaosPart) =>
        heldConnections(part.process.child.pid ?? 0, Number(new URL(part.url).port))
      const rss = startSampler(() => residentBytes(edgePid), 250)
      const prompts = chaosPrompts({ seed: context.seed, prefixes: 4, prefixWords: 60 })
      const windowMs = windowOf(limits)
      const ordinary = startTraffic(
        stack.client(),
        {
          concurrency: 4,
          maxRequests: 100_000,
          durationMs: windowMs,
          request: (i) => chaosRequest(prompts(i), { maxTokens: 16 }),
        },
        nowMs,
      )
      // The baseline: the ordinary clients' own connections (kept alive between requests).
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      const baseline = (await held(stack.edge)).size
      const key = stack.keys.get(stack.tenant) ?? ''
      const connections = startSampler(async () => (await held(stack.edge)).size, 250)
      const tracked = await openAll(stack.edge, scorer, key, plan, nowMs)
      const allCut = await timeUntil(() => trackCuts(tracked, held, nowMs), {
        limitMs: windowMs,
        everyMs: 250,
        nowMs,
      })
      ordinary.stop()
      const peakHeld = await connections.stop()
      for (const t of tracked) t.connection.destroy()
      const outcomes = await ordinary.done
      const hostilePorts = new Set(tracked.map((t) => t.connection.localPort()))
      // Back: no hostile connection held, and no more than the ordinary clients' pool.
      let left = 0
      const backMs = await timeUntil(
        async () => {
          const now = await held(stack.edge)
          left = now.size
          return now.size <= baseline + 4 && ![...now].some((port) => hostilePorts.has(port))
        },
        { limitMs: 10_000, nowMs },
      )
      const samples = await rss.stop()
      const [before, peak, after] = [samples[0] ?? 0, Math.max(...samples), samples.at(-1) ?? 0]
      return {
        ...tallyOutcomes(outcomes),
        convergence: { what: 'every hostile connection cut', ms: allCut, targetMs: null },
        checks: [
          ...kindChecks(tracked),
          {
            name: 'edge memory bounded',
            ok: peak - before < memoryBudgetBytes,
            detail: `RSS ${mib(before)} before, peak ${mib(peak)}, ${mib(after)} after (growth allowed: ${mib(memoryBudgetBytes)})`,
          },
          {
            name: "the edge's connections back to baseline",
            ok: backMs !== null,
            detail: `${baseline} held before (the ordinary clients'), peak ${Math.max(0, ...peakHeld)}, ${left} after; ${backMs === null ? 'not back within 10 s' : `back ${backMs.toFixed(0)} ms after the hostile clients gave up`}`,
          },
        ],
        notes: [
          `${tracked.length} hostile connections (${Object.entries(plan)
            .map(([kind, n]) => `${n} ${kind}`)
            .join(', ')}) with ${outcomes.length} ordinary requests alongside`,
          `limits: headers ${limits.headersMs / 1000} s, request ${limits.requestMs / 1000} s, write stall ${limits.writeStallMs / 1000} s`,
        ],
      }
    } finally {
      await stack.close()
    }
  },
}

async function openAll(
  edge: ChaosPart,
  scorer: ChaosPart,
  key: string,
  plan: Plan,
  nowMs: () => number,
): Promise<Tracked[]> {
  const tracked: Tracked[] = []
  const add = (part: ChaosPart, count: number, open: () => HostileConnection) => {
    for (let i = 0; i < count; i++)
      tracked.push({
        connection: open(),
        part,
        openedMs: nowMs(),
        cutAfterMs: null,
        missingSinceMs: null,
      })
  }
  const long = {
    model: 'qwen3.8-27b-fp8',
    messages: [{ role: 'user', content: 'Write a long story about caches.' }],
    // About 6 MB of events: more than the loopback's socket buffers take (about 4 MB here)
    // before the edge feels the backpressure.
    max_tokens: 30_000,
    ignore_eos: true,
    stream: true,
  }
  add(edge, plan.neverRead, () => neverReads(edge.url, key, long))
  add(edge, plan.trickling, () => tricklingBody(edge.url, key))
  add(scorer, plan.scorerSlowloris, () => slowloris(scorer.url))
  // In batches, as a botnet would ramp up: a thousand at once would test the listen queue.
  for (let done = 0; done < plan.slowloris; done += 100) {
    add(edge, Math.min(100, plan.slowloris - done), () => slowloris(edge.url))
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  await new Promise((resolve) => setTimeout(resolve, 500))
  return tracked
}

/** Marks the connections their server no longer holds (missing twice); true once none is. */
async function trackCuts(
  tracked: Tracked[],
  held: (part: ChaosPart) => Promise<Set<number>>,
  nowMs: () => number,
): Promise<boolean> {
  const byPart = new Map<ChaosPart, Set<number>>()
  for (const t of tracked) if (!byPart.has(t.part)) byPart.set(t.part, await held(t.part))
  for (const t of tracked) {
    const port = t.connection.localPort()
    if (t.cutAfterMs !== null || port === null) continue
    if (byPart.get(t.part)?.has(port)) t.missingSinceMs = null
    else if (t.missingSinceMs === null) t.missingSinceMs = nowMs()
    else t.cutAfterMs = t.missingSinceMs - t.openedMs
  }
  return tracked.every((t) => t.cutAfterMs !== null)
}

function kindChecks(tracked: readonly Tracked[]): ScenarioCheck[] {
  const kinds = new Map<string, Tracked[]>()
  for (const t of tracked) {
    const kind = `${t.connection.kind} (${t.part.name})`
    kinds.set(kind, [...(kinds.get(kind) ?? []), t])
  }
  return [...kinds].map(([kind, list]) => {
    const cut = list.flatMap((t) => (t.cutAfterMs === null ? [] : [t.cutAfterMs / 1000]))
    const answered = list.filter((t) => /^HTTP\/1\.1 408/.test(t.connection.received())).length
    const s = (v: number | null) => (v === null ? '–' : `${v.toFixed(1)} s`)
    return {
      name: `${kind}: every connection cut by the server`,
      ok: cut.length === list.length,
      detail: `${cut.length} of ${list.length} cut, after p50 ${s(percentile(cut, 50))}, max ${s(percentile(cut, 100))}; ${answered} answered 408 first`,
    }
  })
}

function edgeLimitArgs(limits: Limits): string[] {
  return [
    ...['--headers-timeout', `${limits.headersMs}ms`],
    ...['--request-timeout', `${limits.requestMs}ms`],
    ...['--stream-stall-timeout', `${limits.writeStallMs}ms`],
  ]
}
