import { type BlockKeyChain, extendBlockKeys, keyHex } from '../../../shared/kv-index/block-keys.ts'
import type { ApplyResult, IndexEvent, PodId } from '../../../shared/kv-index/kv-index.ts'

interface PodModel {
  /** Engine hash → our key (hex); Map keeps first-store order. */
  engine: Map<bigint, { key: string }>
  speculative: Map<string, number>
}

/**
 * The KvIndex contract written as plainly as possible (linear scans, strings), for the
 * model-based test: the real indexes must answer exactly as this does. Limits (engine-hash
 * and speculative caps) are not modelled; the test stays far below them.
 */
export class ReferenceKvIndex {
  private readonly pods = new Map<PodId, PodModel>()

  private pod(pod: PodId): PodModel {
    let model = this.pods.get(pod)
    if (model === undefined) {
      model = { engine: new Map(), speculative: new Map() }
      this.pods.set(pod, model)
    }
    return model
  }

  apply(pod: PodId, model: string, events: readonly IndexEvent[]): ApplyResult {
    const result = {
      stored: 0,
      removed: 0,
      unknownParents: 0,
      unknownRemovals: 0,
      duplicate: false,
    }
    const state = this.pod(pod)
    for (const event of events) {
      if (event.type === 'cleared') {
        state.engine.clear()
        state.speculative.clear()
      } else if (event.type === 'removed') {
        for (const hash of event.engineHashes) {
          const entry = state.engine.get(hash)
          if (entry === undefined) {
            result.unknownRemovals++
            continue
          }
          state.engine.delete(hash)
          result.removed++
        }
      } else {
        let parent: { high: number; low: number } | null = null
        if (event.parentEngineHash !== null) {
          const entry = state.engine.get(event.parentEngineHash)
          if (entry === undefined) {
            result.unknownParents++
            continue
          }
          parent = {
            high: Number.parseInt(entry.key.slice(0, 8), 16),
            low: Number.parseInt(entry.key.slice(8), 16),
          }
        }
        const keys = extendBlockKeys(
          parent,
          event.tokenIds,
          event.blockSize,
          { model, loraName: event.loraName, cacheSalt: event.cacheSalt },
          event.blockExtras ?? null,
        )
        const count = Math.min(event.engineHashes.length, keys.length / 2)
        for (let i = 0; i < count; i++) {
          const hash = event.engineHashes[i] as bigint
          const key = keyHex(keys, i)
          // The same key again is a re-announcement (report mode "full"): counted once.
          if (state.engine.get(hash)?.key !== key) state.engine.set(hash, { key })
        }
        result.stored += count
      }
    }
    return result
  }

  lookup(chain: BlockKeyChain, pods: readonly PodId[], nowMs: number): number[] {
    return pods.map((pod) => {
      const state = this.pods.get(pod)
      if (state === undefined) return 0
      const held = new Set([...state.engine.values()].map((entry) => entry.key))
      let depth = 0
      while (depth < chain.length / 2) {
        const key = keyHex(chain, depth)
        if (!held.has(key) && !((state.speculative.get(key) ?? -Infinity) > nowMs)) break
        depth++
      }
      return depth
    })
  }

  addSpeculative(pod: PodId, chain: BlockKeyChain, blocks: number, expiresAtMs: number): void {
    const state = this.pod(pod)
    for (let i = 0; i < Math.min(blocks, chain.length / 2); i++) {
      const key = keyHex(chain, i)
      state.speculative.set(key, Math.max(expiresAtMs, state.speculative.get(key) ?? -Infinity))
    }
  }

  dropPod(pod: PodId): void {
    this.pods.delete(pod)
  }
}
