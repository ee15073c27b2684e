import type { KvCacheEvent } from '../kv-events/kv-cache-event.ts'
import type { EngineKvEvent } from './engine/block-pool.ts'

/** An engine event as vLLM publishes it: GPU tier, no LoRA id. */
export function toWireEvent(event: EngineKvEvent): KvCacheEvent {
  switch (event.type) {
    case 'BlockStored':
      return { ...event, loraId: null, medium: 'GPU' }
    case 'BlockRemoved':
      return { ...event, medium: 'GPU' }
    case 'AllBlocksCleared':
      return event
  }
}
