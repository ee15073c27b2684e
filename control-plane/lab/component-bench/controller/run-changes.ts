import type { KubeApiServer } from '../../../../test/support/kube-api-server/start-kube-api-server.ts'
import { type BenchCluster, type ChangeKind, changeKinds } from './bench-cluster.ts'
import type { ControllerProcess } from './controller-process.ts'
import type { Propagation, PropagationProbe } from './propagation-probe.ts'

/** One change and what it cost, from the API write on. */
export interface ChangeRecord extends Propagation {
  kind: ChangeKind
  target: string
  /** Status subresource PUTs the controller sent for it. */
  statusWrites: number
  /** The write to the last of those PUTs; null when it sent none. */
  statusSettledMs: number | null
  /** Reconciles the controller finished for it. */
  reconciles: number
  /** The controller's VmRSS once it was done. */
  rssBytes: number
}

export interface RunChangesOptions {
  server: KubeApiServer
  cluster: BenchCluster
  probe: PropagationProbe
  controller: Pick<ControllerProcess, 'metrics' | 'memory'>
  perKind: number
  random: () => number
  /** Quiet time, after a finished reconcile, with no status write and no other reconcile. */
  quietMs: number
  timeoutMs: number
  log: (line: string) => void
}

/** `perKind` of each kind, in an order the seed shuffles (Fisher-Yates). */
export function planChanges(perKind: number, random: () => number): ChangeKind[] {
  const plan = changeKinds.flatMap((kind) => Array<ChangeKind>(perKind).fill(kind))
  for (let i = plan.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[plan[i], plan[j]] = [plan[j] as ChangeKind, plan[i] as ChangeKind]
  }
  return plan
}

/**
 * The changes one at a time: each is written, followed until the scorer applied it, then
 * the controller's status writes for it are let finish, so the next change starts on an
 * idle controller and every status write is counted against the change that caused it.
 */
export async function runChanges(options: RunChangesOptions): Promise<ChangeRecord[]> {
  const plan = planChanges(options.perKind, options.random)
  const records: ChangeRecord[] = []
  const reconciled = async () =>
    (await options.controller.metrics()).get('kinference_controller_reconcile_seconds_count') ?? 0
  for (const [n, kind] of plan.entries()) {
    const reconcilesBefore = await reconciled()
    const writes = trackStatusWrites(options.server)
    const writtenAt = { mono: performance.now(), wall: Date.now() }
    const change = options.cluster.change(kind, options.random)
    const propagation = await withTimeout(
      options.probe.watch(change, writtenAt),
      options.timeoutMs,
      `${kind} ${change.target} to reach the follower and the scorer`,
    )
    const settled = await writes.settle(options.quietMs, async () => {
      const count = await reconciled()
      return count > reconcilesBefore ? count - reconcilesBefore : null
    })
    records.push({
      kind,
      target: change.target,
      ...propagation,
      statusWrites: settled.count,
      statusSettledMs: settled.lastAt === null ? null : settled.lastAt - writtenAt.mono,
      reconciles: settled.reconciles,
      rssBytes: (await options.controller.memory()).rssBytes,
    })
    if ((n + 1) % 20 === 0) options.log(`controller bench: ${n + 1} of ${plan.length} changes`)
  }
  return records
}

/**
 * Status writes from now on, polled every 5 ms while the change propagates. `settle`
 * waits for the controller to have finished a reconcile (`finished` says how many, or
 * null before the first), then for `quietMs` with no new status write or reconcile: so
 * a pause between publishing and writing status cannot end a change early.
 */
function trackStatusWrites(server: KubeApiServer) {
  const before = statusWrites(server)
  let seen = before
  let lastAt: number | null = null
  const poll = () => {
    const now = statusWrites(server)
    if (now !== seen) {
      seen = now
      lastAt = performance.now()
    }
  }
  const timer = setInterval(poll, 5)
  return {
    async settle(quietMs: number, finished: () => Promise<number | null>) {
      let reconciles: number | null = null
      let changedAt = performance.now()
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        poll()
        const count = await finished()
        if (count !== reconciles) changedAt = performance.now()
        reconciles = count
        const quiet = performance.now() - Math.max(lastAt ?? 0, changedAt)
        if (reconciles !== null && quiet >= quietMs) break
      }
      clearInterval(timer)
      return { count: seen - before, lastAt, reconciles }
    },
  }
}

const counted = new WeakMap<KubeApiServer, { scanned: number; count: number }>()

/** Status PUTs in the server's request log so far; each entry is looked at once. */
export function statusWrites(server: KubeApiServer): number {
  const tally = counted.get(server) ?? { scanned: 0, count: 0 }
  for (; tally.scanned < server.requests.length; tally.scanned++) {
    const request = server.requests[tally.scanned]
    if (request?.subresource === 'status' && request.verb === 'update') tally.count++
  }
  counted.set(server, tally)
  return tally.count
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
