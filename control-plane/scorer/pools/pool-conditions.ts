import type { PoolCondition } from '../../../shared/state/pool-state.ts'

/** A condition as it is now, before its transition time is known. */
export type ConditionNow = Omit<PoolCondition, 'lastTransitionMs'>

/**
 * A pool's conditions, each with the time its status last changed: setting one with the
 * status it has keeps that time (metav1.Condition's lastTransitionTime), so the shared
 * state and the status page say since when a pool is marked.
 */
export class PoolConditions {
  private readonly known = new Map<string, PoolCondition>()

  set(condition: ConditionNow, nowMs: number): PoolCondition {
    const before = this.known.get(condition.type)
    const next = {
      ...condition,
      lastTransitionMs:
        before && before.status === condition.status ? before.lastTransitionMs : nowMs,
    }
    this.known.set(condition.type, next)
    return next
  }

  get(type: string): PoolCondition | undefined {
    return this.known.get(type)
  }
}
