import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { ScorerConfig, ScorerPod, ScorerPool } from '../scorer-config.ts'
import {
  type ScorerState,
  type StateOf,
  type StatePool,
  scorerStateOf,
} from '../state/scorer-state.ts'
import type { LivePools } from './live-pools.ts'
import { planScorerChange, type ScorerChangePlan, sameJson } from './plan-scorer-change.ts'
import type { PoolRuntime } from './pool-runtime.ts'

/** What applying a config did: nothing (same hash), refused it (why), or the changes. */
export type ApplyReport =
  | { outcome: 'unchanged'; hash: string | null }
  | { outcome: 'refused'; hash: string | null; reason: string }
  | {
      outcome: 'applied'
      hash: string | null
      /** Pool ids. */
      pools: { added: string[]; removed: string[]; changed: string[] }
      /** Pod names; a changed pod was re-added (new address, feed or pool). */
      pods: { added: string[]; removed: string[]; changed: string[] }
      backendsChanged: boolean
    }

export interface ScorerReconcilerOptions {
  live: LivePools
  /** A runtime for a pool (no pods yet); it may throw for a spec it cannot run. */
  createRuntime: (pool: StatePool) => PoolRuntime
  drainTimeoutMs: number
  log: (message: string) => void
  /** After each applied change (the metrics scraper follows the pools' periods). */
  onChange?: () => void
  /** A new snapshot came: tokenizers that could not be loaded are tried again first. */
  retryTokenizers?: () => void
}

const empty: ScorerState = { hash: null, pools: [], pods: [], backends: {} }

/**
 * What the scorer serves, changed one step at a time: a snapshot, or a pod given by hand,
 * becomes a new state, checked, then applied to the live runtimes (new pools built first,
 * pods removed everywhere before they are re-added, the view swapped, replaced runtimes
 * left to drain). Calls wait for the ones before them.
 */
export class ScorerReconciler {
  private readonly options: ScorerReconcilerOptions
  private state: ScorerState = empty
  private snapshot: ConfigSnapshot | null = null
  private handPools: ScorerPool[] = []
  private extras: Pick<ScorerConfig, 'pods' | 'backends'> = { pods: [], backends: {} }
  /** Pods removed by hand: left out until a snapshot lists them again. */
  private readonly excluded = new Set<string>()
  private queue: Promise<unknown> = Promise.resolve()

  constructor(options: ScorerReconcilerOptions) {
    this.options = options
  }

  /** The hash of the snapshot applied last; null when the config came without one. */
  get hash(): string | null {
    return this.state.hash
  }

  /** The snapshot served now; null when the config came without one (pools by hand). */
  get appliedSnapshot(): ConfigSnapshot | null {
    return this.snapshot
  }

  get applied(): ScorerState {
    return this.state
  }

  /** The config the scorer starts with; anything wrong with it throws (invalid_config). */
  start(config: ScorerConfig): Promise<void> {
    return this.serial(async () => {
      this.snapshot = config.snapshot
      this.handPools = config.pools
      this.extras = { pods: config.pods, backends: config.backends }
      const next = this.derive()
      const wrong = [...next.problems, ...next.skipped]
      if (wrong.length > 0) throw new KinfError('invalid_config', wrong.join('; '))
      const report = await this.applyNow(next)
      if (report.outcome === 'refused') throw new KinfError('invalid_config', report.reason)
    })
  }

  /** A verified snapshot: its pools, backends and endpoints (see ApplyReport). */
  applySnapshot(snapshot: ConfigSnapshot): Promise<ApplyReport> {
    return this.serial(async () => {
      if (snapshot.hash === this.state.hash) return { outcome: 'unchanged', hash: snapshot.hash }
      const before = { snapshot: this.snapshot, handPools: this.handPools }
      this.snapshot = snapshot
      this.handPools = []
      this.options.retryTokenizers?.()
      const report = await this.applyNow(this.derive(true))
      if (report.outcome !== 'refused') this.excluded.clear()
      else {
        this.snapshot = before.snapshot
        this.handPools = before.handPools
      }
      return report
    })
  }

  /** A pod given by hand, kept across snapshots while its pool exists. */
  addPod(pod: ScorerPod): Promise<void> {
    return this.serial(async () => {
      const before = this.extras
      this.extras = { ...before, pods: [...before.pods.filter((p) => p.name !== pod.name), pod] }
      this.excluded.delete(pod.name)
      const next = this.derive()
      const report = next.state.pods.some((p) => p.name === pod.name)
        ? await this.applyNow(next)
        : null
      if (report?.outcome !== 'applied') {
        this.extras = before
        const reason = report?.outcome === 'refused' ? report.reason : 'unknown pool'
        throw new KinfError('invalid_config', `pod ${pod.name} (pool "${pod.pool}"): ${reason}`)
      }
    })
  }

  /** A pod gone: out of every runtime and the index (until a snapshot lists it again). */
  removePod(name: string): Promise<void> {
    return this.serial(async () => {
      this.extras = { ...this.extras, pods: this.extras.pods.filter((p) => p.name !== name) }
      this.excluded.add(name)
      await this.applyNow(this.derive())
    })
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task)
    this.queue = run.catch(() => {})
    return run
  }

  private derive(fromSnapshot = false): StateOf {
    const next = scorerStateOf(this.snapshot, this.handPools, this.extras)
    const excluded = fromSnapshot ? new Set<string>() : this.excluded
    next.state.pods = next.state.pods.filter((pod) => !excluded.has(pod.name))
    return next
  }

  private async applyNow({ state, problems, skipped }: StateOf): Promise<ApplyReport> {
    const reason = problems[0] ?? (state.pools.length === 0 ? 'it has no pool' : null)
    if (reason !== null) return this.refuse(state.hash, reason)
    const plan = planScorerChange(this.state, state)
    let built: Map<string, PoolRuntime>
    try {
      built = this.build([...plan.pools.added, ...plan.pools.changed])
    } catch (error) {
      return this.refuse(state.hash, (error as Error).message)
    }
    for (const note of skipped) this.options.log(`config ${state.hash ?? '(local)'}: ${note}`)
    const { live } = this.options
    const current = new Map(live.current.pools.map((pool) => [pool.id, pool]))
    await this.movePods(plan, state, current, built)
    const pools = state.pools.flatMap((pool) => built.get(pool.id) ?? current.get(pool.id) ?? [])
    const retired = [...plan.pools.removed, ...plan.pools.changed.map((pool) => pool.id)].flatMap(
      (id) => current.get(id) ?? [],
    )
    live.replace({ pools, backends: state.backends }, retired, this.options.drainTimeoutMs)
    const backendsChanged = !sameJson(this.state.backends, state.backends)
    this.state = state
    this.options.onChange?.()
    return reportOf(state.hash, plan, backendsChanged)
  }

  /**
   * New runtimes, their tokenizers loaded: a pool the scorer cannot run throws here. A
   * tokenizer that cannot be loaded does not: its pool runs without it, routing on load
   * alone, marked by its TokenizerReady condition, and the other pools are unaffected.
   */
  private build(pools: readonly StatePool[]): Map<string, PoolRuntime> {
    const built = new Map<string, PoolRuntime>()
    try {
      for (const pool of pools) {
        const runtime = this.options.createRuntime(pool)
        built.set(pool.id, runtime)
        for (const model of pool.spec.models) runtime.serves(model.name)
      }
    } catch (error) {
      for (const runtime of built.values()) void runtime.close()
      throw new KinfError('invalid_config', `pool: ${(error as Error).message}`, { cause: error })
    }
    return built
  }

  /**
   * Pods gone or changed leave every runtime (draining ones too) first, so their feeds
   * close; then kept pools take their new and changed pods, new runtimes all of theirs.
   */
  private async movePods(
    plan: ScorerChangePlan,
    state: ScorerState,
    current: ReadonlyMap<string, PoolRuntime>,
    built: ReadonlyMap<string, PoolRuntime>,
  ): Promise<void> {
    const gone = [...plan.pods.removed, ...plan.pods.changed.map((pod) => pod.name)]
    await Promise.all(
      this.options.live.all().flatMap((runtime) => gone.map((name) => runtime.removePod(name))),
    )
    const kept = new Set(plan.pools.kept)
    const adds = [...plan.pods.added, ...plan.pods.changed].flatMap((pod) => {
      const runtime = kept.has(pod.pool) ? current.get(pod.pool) : undefined
      return runtime ? [runtime.addPod(pod)] : []
    })
    for (const [id, runtime] of built)
      for (const pod of state.pods) if (pod.pool === id) adds.push(runtime.addPod(pod))
    await Promise.all(adds)
  }

  private refuse(hash: string | null, reason: string): ApplyReport {
    this.options.log(
      `config ${hash ?? '(local)'} refused: ${reason}; still serving ${this.state.hash ?? '(local)'}`,
    )
    return { outcome: 'refused', hash, reason }
  }
}

function reportOf(
  hash: string | null,
  plan: ScorerChangePlan,
  backendsChanged: boolean,
): ApplyReport {
  const names = (pods: readonly { name: string }[]) => pods.map((pod) => pod.name)
  const ids = (pools: readonly { id: string }[]) => pools.map((pool) => pool.id)
  return {
    outcome: 'applied',
    hash,
    pools: {
      added: ids(plan.pools.added),
      removed: plan.pools.removed,
      changed: ids(plan.pools.changed),
    },
    pods: {
      added: names(plan.pods.added),
      removed: plan.pods.removed,
      changed: names(plan.pods.changed),
    },
    backendsChanged,
  }
}
