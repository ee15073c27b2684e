import { keyHex } from '../../shared/kv-index/block-keys.ts'
import type { IndexEvent } from '../../shared/kv-index/kv-index.ts'
import { storedBlockCount, storedBlockKeys } from '../../shared/kv-index/stored-block-keys.ts'

/**
 * Turning a pod's event batch into the apply script's arguments. Our keys are computed here
 * (the script would be far slower at it), which needs each stored event's parent key: from
 * this batch, else from Redis (read before the script), else from the replica's hints.
 */

/** Parent hashes that neither the hints nor the batch itself can resolve: read them first. */
export function parentsToRead(
  events: readonly IndexEvent[],
  hints: ReadonlyMap<bigint, string>,
): bigint[] {
  const toRead = new Set<bigint>()
  // Hashes the batch stores on a parent it can resolve without a read (a root, a hint, or
  // these): their children need no read either. Children of a read parent are read too, so
  // the answer is exact even when the read parent turns out unknown.
  const resolvable = new Set<bigint>()
  let cleared = false
  for (const event of events) {
    if (event.type === 'cleared') {
      cleared = true
      resolvable.clear()
    } else if (event.type === 'stored') {
      const parent = event.parentEngineHash
      // After a clear in this batch, only the batch's own blocks can be parents.
      const certain = parent === null || resolvable.has(parent) || (!cleared && hints.has(parent))
      if (!certain && !cleared && typeof parent === 'bigint') toRead.add(parent)
      if (certain) {
        const count = storedBlockCount(event)
        for (let i = 0; i < count; i++) resolvable.add(event.engineHashes[i] as bigint)
      }
    }
  }
  return [...toRead]
}

export interface BatchPlan {
  /** The apply script's ARGV after prefix, pod and cap: the operations, in order. */
  args: string[]
  /** Stored events dropped here: their parent is known nowhere. */
  unknownParents: number
  /** Removed "hashes" that are not hashes at all. */
  unknownRemovals: number
  /**
   * Hint updates to make once the script has run, in order ('clear' empties the pod's);
   * `stored` is the ordinal of the stored event sent, to skip those the script rejected.
   */
  hintUpdates: ({ hash: bigint; key: string | null; stored?: number } | 'clear')[]
  /** The parent hash of each stored event sent, by ordinal (1-based; null for none). */
  parents: (bigint | null)[]
}

const hexKey = /^[0-9a-f]{16}$/

/** Engine hashes modulo 2^64, as the memory index takes them (the decoder already folds). */
export function hexOf(hash: bigint): string {
  return BigInt.asUintN(64, hash).toString(16)
}

function toPair(key: string): { high: number; low: number } {
  return { high: Number.parseInt(key.slice(0, 8), 16), low: Number.parseInt(key.slice(8), 16) }
}

/**
 * The script's operations for `events`. `read` holds what Redis answered for the parents of
 * `parentsToRead` (null: not mapped), `hints` the replica's hints; the batch's own stores
 * come first, since they are the newest.
 */
export function planBatch(
  model: string,
  events: readonly IndexEvent[],
  read: ReadonlyMap<bigint, string | null>,
  hints: ReadonlyMap<bigint, string>,
): BatchPlan {
  const args: string[] = []
  const plan: BatchPlan = {
    args,
    unknownParents: 0,
    unknownRemovals: 0,
    hintUpdates: [],
    parents: [null],
  }
  const batch = new Map<bigint, string>()
  let cleared = false
  for (const event of events) {
    if (event.type === 'cleared') {
      args.push('C')
      batch.clear()
      cleared = true
      plan.hintUpdates.push('clear')
    } else if (event.type === 'removed') {
      const hashes = Array.isArray(event.engineHashes) ? event.engineHashes : []
      const valid = hashes.filter((hash) => typeof hash === 'bigint')
      plan.unknownRemovals += hashes.length - valid.length
      if (valid.length === 0) continue
      args.push('R', String(valid.length))
      for (const hash of valid) {
        args.push(hexOf(hash))
        plan.hintUpdates.push({ hash, key: null })
      }
    } else if (event.type === 'stored') {
      const parent = event.parentEngineHash
      let parentKey = ''
      if (parent !== null) {
        const known =
          typeof parent !== 'bigint'
            ? undefined
            : (batch.get(parent) ??
              (cleared ? undefined : read.has(parent) ? read.get(parent) : hints.get(parent)))
        if (typeof known !== 'string' || !hexKey.test(known)) {
          plan.unknownParents++
          continue
        }
        parentKey = known
      }
      const count = storedBlockCount(event)
      const keys =
        count === 0
          ? null
          : storedBlockKeys(event, parent === null ? null : toPair(parentKey), model)
      args.push('S', String(count), parentKey)
      if (parent !== null) args.push(hexOf(parent))
      const ordinal = plan.parents.push(parent) - 1
      const at = args.length
      for (let i = 0; i < count; i++) {
        const hash = event.engineHashes[i] as bigint
        const key = keyHex(keys as Uint32Array, i)
        args[at + i] = hexOf(hash)
        args[at + count + i] = key
        batch.set(hash, key)
        plan.hintUpdates.push({ hash, key, stored: ordinal })
      }
    }
  }
  return plan
}
