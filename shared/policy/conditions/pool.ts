import { z } from 'zod'
import { resourceId } from '../../config/resource-id.ts'
import { ResourceName } from '../../crd/object-meta.ts'
import { range } from '../../crd/policy-match.ts'
import { matchRange } from './numeric-range.ts'
import { type ConditionResult, type LiveStatus, statusCondition } from './policy-condition.ts'

export const PoolStatusMatch = z
  .strictObject({
    name: ResourceName.describe('The InferencePool whose live status is tested.'),
    saturated: z
      .boolean()
      .optional()
      .describe('true: matches only while the pool is saturated; false: only while it is not.'),
    saturation: range('saturation (0 idle, 1 saturated)', z.number().min(0)).optional(),
    predictedTtftMs: range('predicted TTFT of the best pod, in ms', z.number().min(0)).optional(),
  })
  .describe('Matches on the pool’s live status as the scorer reports it.')
export type PoolStatusMatch = z.infer<typeof PoolStatusMatch>

/** `match.pool`: the named pool's live status; unknown status never holds. */
export const poolCondition = statusCondition({
  key: 'pool',
  schema: PoolStatusMatch.optional(),
  pools: (pool, namespace) => [resourceId(namespace, pool.name)],
  match: matchPoolStatus,
  // Live pool status changes; only an identical condition is known to cover.
  covers: (earlier, later) =>
    later !== undefined && JSON.stringify(earlier) === JSON.stringify(later),
  references: (pool) => [{ path: ['name'], kind: 'InferencePool', name: pool.name }],
})

function matchPoolStatus(pool: PoolStatusMatch, live: LiveStatus): ConditionResult {
  const id = resourceId(live.namespace, pool.name)
  const status = live.poolStatus(id)
  if (status === undefined) return { holds: false, why: `pool ${id} status unknown` }
  const why: string[] = []
  if (pool.saturated !== undefined) {
    if (status.saturated !== pool.saturated) {
      return {
        holds: false,
        why: `pool ${id} is ${status.saturated ? '' : 'not '}saturated (rule wants saturated: ${pool.saturated})`,
      }
    }
    why.push(`pool ${id} ${status.saturated ? '' : 'not '}saturated`)
  }
  if (pool.saturation !== undefined) {
    const result = matchRange(`pool ${id} saturation`, status.saturation, pool.saturation)
    if (!result.holds) return result
    why.push(...result.why)
  }
  if (pool.predictedTtftMs !== undefined) {
    const ttft = status.predictedTtftMs
    if (ttft === null) return { holds: false, why: `pool ${id} predicted TTFT unknown` }
    const result = matchRange(`pool ${id} predictedTtftMs`, ttft, pool.predictedTtftMs)
    if (!result.holds) return result
    why.push(...result.why)
  }
  if (why.length === 0) why.push(`pool ${id} status known`)
  return { holds: true, why }
}
