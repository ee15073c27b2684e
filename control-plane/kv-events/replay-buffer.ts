import { KinfError } from '../../shared/errors/kinf-error.ts'

export interface ReplayEntry {
  readonly seq: bigint
  readonly payload: Uint8Array
}

/** vLLM's `deque(maxlen=buffer_steps)` of `(seq, payload)`: the newest batches, oldest first. */
export interface ReplayBuffer {
  push(seq: bigint, payload: Uint8Array): void
  /** Every buffered entry with seq >= startSeq, oldest first; a snapshot, safe to await over. */
  since(startSeq: bigint): ReplayEntry[]
  readonly size: number
}

export function createReplayBuffer(capacity: number): ReplayBuffer {
  if (!Number.isSafeInteger(capacity) || capacity < 1) {
    throw new KinfError(
      'invalid_config',
      `kv-events: bufferSteps must be a positive integer, got ${capacity}`,
    )
  }
  const slots: (ReplayEntry | undefined)[] = new Array(capacity)
  let next = 0
  let size = 0
  return {
    push(seq, payload) {
      slots[next] = { seq, payload }
      next = (next + 1) % capacity
      size = Math.min(size + 1, capacity)
    },
    since(startSeq) {
      const entries: ReplayEntry[] = []
      for (let i = 0; i < size; i++) {
        const entry = slots[(next - size + i + capacity) % capacity]
        if (entry !== undefined && entry.seq >= startSeq) entries.push(entry)
      }
      return entries
    },
    get size() {
      return size
    },
  }
}
