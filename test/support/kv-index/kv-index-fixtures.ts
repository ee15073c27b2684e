import { computeBlockKeys } from '../../../shared/kv-index/block-keys.ts'
import type { IndexEvent } from '../../../shared/kv-index/kv-index.ts'

/** Small blocks keep the fixtures readable; the index does not care about the size. */
export const blockSize = 4

/** `blocks` full blocks of token ids; `offset` makes distinct prompts. */
export function promptTokens(blocks: number, offset = 0): number[] {
  return Array.from({ length: blocks * blockSize }, (_, i) => (offset * 7919 + i * 31) % 151_000)
}

/** Engine hashes base+1 … base+n: stand-ins for vLLM's (opaque to the index). */
export function engineHashes(n: number, base: bigint): bigint[] {
  return Array.from({ length: n }, (_, i) => base + BigInt(i + 1))
}

export interface StoredOptions {
  loraName?: string | null
  cacheSalt?: string | null
  blockSize?: number
}

export function stored(
  hashes: readonly bigint[],
  parent: bigint | null,
  tokens: ArrayLike<number>,
  options: StoredOptions = {},
): IndexEvent {
  return {
    type: 'stored',
    engineHashes: hashes,
    parentEngineHash: parent,
    tokenIds: tokens,
    blockSize: options.blockSize ?? blockSize,
    loraName: options.loraName ?? null,
    cacheSalt: options.cacheSalt ?? null,
  }
}

export function removed(...hashes: bigint[]): IndexEvent {
  return { type: 'removed', engineHashes: hashes }
}

export const cleared: IndexEvent = { type: 'cleared' }

/**
 * BlockStored events for blocks [from, to) of a prompt as one vLLM pod would send them:
 * one event per `step` blocks, each chained on the previous block's hash.
 */
export function storedRange(
  tokens: readonly number[],
  hashes: readonly bigint[],
  from: number,
  to: number,
  step: number,
  options: StoredOptions = {},
): IndexEvent[] {
  const events: IndexEvent[] = []
  for (let start = from; start < to; start += step) {
    const end = Math.min(to, start + step)
    events.push(
      stored(
        hashes.slice(start, end),
        start === 0 ? null : (hashes[start - 1] as bigint),
        tokens.slice(start * blockSize, end * blockSize),
        options,
      ),
    )
  }
  return events
}

export function chainOf(
  tokens: readonly number[],
  model = 'model-a',
  options: { loraName?: string | null; cacheSalt?: string | null } = {},
): Uint32Array {
  return computeBlockKeys(tokens, blockSize, { model, ...options })
}

export const noChanges = {
  stored: 0,
  removed: 0,
  unknownParents: 0,
  unknownRemovals: 0,
  duplicate: false,
}
