import type { PoolLookup, RouteResult } from '../../../../shared/routing/pool-router.ts'
import type { AttentionGroup } from '../../../kv-events/attention-group.ts'
import type { EngineKvEvent } from '../../sim/engine/block-pool.ts'
import type { StepResult, VllmEngine } from '../../sim/engine/vllm-engine.ts'
import type { ChatTurnIds } from '../chat-prompt-ids.ts'
import type { RequestRecord } from '../request-record.ts'

// What the discrete-event benchmark (run-des-benchmark.ts) schedules and keeps per request.

/** Everything that happens in a DES run, in virtual time. */
export type SimEvent =
  | { kind: 'arrival'; conversation: number }
  | { kind: 'send'; turn: PendingTurn }
  | { kind: 'step'; pod: number }
  | { kind: 'step-end'; pod: number; step: StepResult }
  | { kind: 'events'; pod: number; events: EngineKvEvent[]; seq: bigint }
  | { kind: 'scrape'; replica: number }
  | { kind: 'provider-end'; flight: InFlight }
  | {
      kind: 'metrics'
      replica: number
      snapshot: { running: number; waiting: number; kvCacheUsage: number }[]
    }

/** A turn to send: its conversation, its index, and the conversation so far. */
export interface PendingTurn {
  conversation: number
  turn: number
  history: ChatTurnIds[]
}

/** A request a pod (or the provider) is answering, and the conversation it continues. */
export interface InFlight {
  record: RequestRecord
  conversation: number
  turn: number
  history: ChatTurnIds[]
}

/** A request on its way to a pod (held there by late binding, if the pool holds). */
export interface Arrival {
  entry: PendingTurn
  prompt: number[]
  lookup: PoolLookup
  outputTokens: number
  userIds: number[]
  startMs: number
  /** Whose request it is, where the run has tenants. */
  tenant: string | null
  released: (route: RouteResult, nowMs: number) => void
  /** Held past its objective's deadline (admission that holds): refused or burst. */
  expired?: (nowMs: number) => void
}

/** A simulated vLLM pod: its engine and what its KV events have said. */
export interface Pod {
  name: string
  engine: VllmEngine
  stepping: boolean
  seq: bigint
  /** Which of its KV-cache groups the index keeps, as the scorer's ingestor learns it. */
  groups: AttentionGroup
}

/** A request's record before its first token: sent, nothing back yet. */
export function baseRecord(
  id: string,
  arrival: Arrival,
  time: number,
  promptTokens: number,
  pod: string | null,
): RequestRecord {
  const { entry } = arrival
  return {
    id,
    conversation: entry.conversation,
    turn: entry.turn,
    startMs: arrival.startMs,
    firstTokenMs: null,
    tokenTimesMs: [],
    endMs: time,
    promptTokens,
    outputTokens: 0,
    cachedTokens: 0,
    pod,
    error: null,
    ...(arrival.tenant !== null ? { tenant: arrival.tenant } : {}),
  }
}
