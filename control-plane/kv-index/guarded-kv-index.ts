import { z } from 'zod'
import { functionOption, parseOptions } from '../../shared/config/parse-options.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { KvIndex, PodId } from '../../shared/kv-index/kv-index.ts'
import { wholeNumber } from '../../shared/kv-index/kv-index-limits.ts'

/** Why a lookup was answered cache-cold instead of by the shared index. */
export type ColdLookupReason = 'error' | 'deadline' | 'outage'

export const GuardedKvIndexOptions = z.strictObject({
  index: z.custom<KvIndex>((value) => typeof value === 'object' && value !== null),
  /** One round trip to the index's store; resolves when it answers (RedisKvIndex.ping). */
  probe: functionOption<() => Promise<void>>(),
  lookupDeadlineMs: wholeNumber(1)
    .default(100)
    .describe('A lookup not answered by then is routed cache-cold (load only)'),
  probeIntervalMs: wholeNumber(1)
    .default(250)
    .describe('While the store is out, how often it is asked whether it is back'),
  onColdLookup: functionOption<(reason: ColdLookupReason) => void>(),
  log: functionOption<(message: string) => void>(),
  nowMs: functionOption<() => number>().default(() => () => performance.now()),
})
export type GuardedKvIndexOptionsInput = z.input<typeof GuardedKvIndexOptions>

/** The index's store came back after `outageMs`: whatever was written meanwhile is missing. */
export type RecoveryListener = (outageMs: number) => void | Promise<void>

export interface GuardedKvIndex extends KvIndex {
  /** False from a failed call until the store answers a probe again. */
  readonly available: boolean
  /** Listeners run after each outage, once pods dropped meanwhile are gone from the store. */
  onRecovered(listener: RecoveryListener): void
}

/**
 * A shared index (Redis) that cannot take routing down with it. A lookup that fails, or
 * is not answered within a short deadline (100 ms), is answered "no pod holds anything": the
 * request is routed on load alone. The first failed call marks the store out: until a
 * probe answers, lookups and speculative entries skip it and writes fail at once, so an
 * outage costs no request any waiting. When it answers again, pods dropped meanwhile are
 * dropped for real, then the recovery listeners run: the scorer replays each pod's history
 * (start-scorer.ts), since every batch that failed is missing from the store.
 */
export function createGuardedKvIndex(input: GuardedKvIndexOptionsInput): GuardedKvIndex {
  const options = parseOptions(GuardedKvIndexOptions, input, 'guarded kv index')
  const { index } = options
  const listeners: RecoveryListener[] = []
  /** Pods to drop once the store is back (a pod removed during the outage). */
  const pendingDrops = new Set<PodId>()
  let outSinceMs: number | null = null
  let probing: NodeJS.Timeout | null = null
  let closed = false

  const unavailable = (operation: string) =>
    new KinfError(
      'upstream_unavailable',
      `kv index: ${operation}: the shared index is unavailable (it is resynchronised when it returns)`,
    )

  function markOut(error: unknown): void {
    if (outSinceMs !== null || closed) return
    outSinceMs = options.nowMs()
    options.log(
      `kv index: ${(error as Error).message}; routing on load alone until the index answers again`,
    )
    probing = setInterval(probe, options.probeIntervalMs)
    probing.unref()
  }

  let probeInFlight = false
  async function probe(): Promise<void> {
    if (probeInFlight || outSinceMs === null) return
    probeInFlight = true
    try {
      await options.probe()
      for (const pod of [...pendingDrops]) {
        await index.dropPod(pod)
        pendingDrops.delete(pod)
      }
    } catch {
      return
    } finally {
      probeInFlight = false
    }
    const outageMs = options.nowMs() - outSinceMs
    outSinceMs = null
    if (probing) clearInterval(probing)
    probing = null
    options.log(`kv index: answering again after ${Math.round(outageMs)} ms; resynchronising`)
    for (const listener of listeners) {
      await Promise.resolve()
        .then(() => listener(outageMs))
        .catch((error: unknown) =>
          options.log(`kv index: resynchronising failed: ${(error as Error).message}`),
        )
    }
  }

  /** `call`, or its failure marking the store out (and rethrown). */
  async function guarded<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call()
    } catch (error) {
      markOut(error)
      throw error
    }
  }

  async function lookupWithin(...args: Parameters<KvIndex['lookup']>): Promise<number[]> {
    const cold = () => args[1].map(() => 0)
    if (outSinceMs !== null) {
      options.onColdLookup('outage')
      return cold()
    }
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<'late'>((resolve) => {
      // setImmediate runs after the loop's I/O: a reply that came while the loop was busy
      // (a long tokenization, GC) is read first, so a stalled process is not a slow Redis.
      timer = setTimeout(() => setImmediate(() => resolve('late')), options.lookupDeadlineMs)
    })
    const answer = index.lookup(...args).then(
      (depths) => ({ depths }),
      (error: unknown) => {
        markOut(error)
        return { error }
      },
    )
    try {
      const first = await Promise.race([answer, late])
      if (first === 'late') {
        options.onColdLookup('deadline')
        return cold()
      }
      if ('error' in first) {
        options.onColdLookup('error')
        return cold()
      }
      return first.depths
    } finally {
      clearTimeout(timer)
    }
  }

  return {
    get available() {
      return outSinceMs === null
    },
    onRecovered(listener) {
      listeners.push(listener)
    },
    apply(pod, model, events, seq) {
      if (outSinceMs !== null) return Promise.reject(unavailable('apply'))
      return guarded(() => index.apply(pod, model, events, seq))
    },
    lookup: lookupWithin,
    async addSpeculative(pod, chain, blocks, expiresAtMs) {
      // A routing hint only: lost in an outage, not worth an error per request.
      if (outSinceMs !== null) return
      await guarded(() => index.addSpeculative(pod, chain, blocks, expiresAtMs)).catch(() => {})
    },
    async dropPod(pod) {
      if (outSinceMs === null) {
        try {
          await guarded(() => index.dropPod(pod))
          return
        } catch {
          // Remembered below: a pod's entries must not outlive it.
        }
      }
      pendingDrops.add(pod)
      throw unavailable('dropPod')
    },
    storedBlocks(pods) {
      if (outSinceMs !== null) return Promise.reject(unavailable('storedBlocks'))
      return guarded(() => index.storedBlocks(pods))
    },
    size: () => guarded(() => index.size()),
    async close() {
      closed = true
      if (probing) clearInterval(probing)
      probing = null
      await index.close()
    },
  }
}
