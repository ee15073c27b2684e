import { Decoder } from '@msgpack/msgpack'
import type { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import {
  AllBlocksCleared,
  BlockRemoved,
  BlockStored,
  type DecodedEventBatch,
  EventBatch,
  type KvCacheEvent,
  type SkippedEvent,
} from './kv-cache-event.ts'
import { eventFields, fieldsOf } from './kv-event-fields.ts'

/**
 * Reads a `KVEventBatch` payload from any vLLM release we know of, and from
 * llm-d-inference-sim: the batch as an array `[ts, events, dp_rank]` or a map; each event
 * as a legacy array `[tag, …fields]` or a map with "type"; hashes in any int width or as
 * `bin`. Unknown keys and extra trailing fields are ignored (newer vLLM adds them).
 *
 * One event that cannot be read (a type this version does not know, a field of the wrong
 * shape, a GPU block of size 0) is left out and listed in `skipped`, never its batch: the
 * batch's other events describe the pod's cache as well as ever. A payload that is not a
 * batch at all throws KinfError('invalid_request'); the process never sees a raw decoder
 * error.
 */
export function decodeEventBatch(bytes: Uint8Array): DecodedEventBatch {
  const { ts, events, rank } = batchParts(readMsgpack(bytes))
  const head = BatchHead.safeParse({ ts, dataParallelRank: rank })
  if (!head.success) {
    throw new KinfError(
      'invalid_request',
      `kv-events: invalid event batch: ${describe(head.error, '')}`,
    )
  }
  const decoded: KvCacheEvent[] = []
  let skipped: SkippedEvent[] | undefined
  for (let i = 0; i < events.length; i++) {
    const event = readEvent(events[i], i)
    if (!('reason' in event)) decoded.push(event)
    else if (skipped === undefined) skipped = [event]
    else skipped.push(event)
  }
  const batch: DecodedEventBatch = {
    ts: head.data.ts,
    events: decoded,
    dataParallelRank: head.data.dataParallelRank,
  }
  if (skipped !== undefined) batch.skipped = skipped
  return batch
}

const BatchHead = EventBatch.pick({ ts: true, dataParallelRank: true })

const schemaOf = { BlockStored, BlockRemoved, AllBlocksCleared } as const

/** Wire name of each event property, for the reason a field was refused. */
const wireNameOf = new Map<string, string>(
  Object.values(eventFields).flatMap((fields) =>
    fields.map((field): [string, string] => [field.key, field.wire]),
  ),
)

function readMsgpack(bytes: Uint8Array): unknown {
  if (bytes.length === 0) throw new KinfError('invalid_request', 'kv-events: empty payload')
  // Every array element and map entry takes at least one byte, so no honest length claim
  // exceeds the payload; this refuses a 4-billion-element header before allocating for it.
  const decoder = new Decoder({
    useBigInt64: true,
    maxArrayLength: bytes.length,
    maxMapLength: bytes.length,
    maxStrLength: bytes.length,
    maxBinLength: bytes.length,
    maxExtLength: bytes.length,
  })
  try {
    return decoder.decode(bytes)
  } catch (error) {
    throw new KinfError('invalid_request', `kv-events: not msgpack: ${messageOf(error)}`, {
      cause: error,
    })
  }
}

type WireRecord = Record<string, unknown>

function isMap(value: unknown): value is WireRecord {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !ArrayBuffer.isView(value)
  )
}

// The decoder builds maps as plain objects: read only own keys, never inherited ones.
const own = (map: WireRecord, key: string) => (Object.hasOwn(map, key) ? map[key] : undefined)

function batchParts(raw: unknown): { ts: unknown; events: unknown[]; rank: unknown } {
  let ts: unknown
  let events: unknown
  let rank: unknown
  if (Array.isArray(raw)) {
    ts = raw[0]
    events = raw[1]
    rank = raw[2] ?? null
  } else if (isMap(raw)) {
    ts = own(raw, 'ts')
    events = own(raw, 'events')
    rank = own(raw, 'data_parallel_rank') ?? null
  } else {
    throw new KinfError(
      'invalid_request',
      `kv-events: batch is a ${kindOf(raw)}, not an array or map`,
    )
  }
  if (!Array.isArray(events)) {
    throw new KinfError(
      'invalid_request',
      `kv-events: batch events is a ${kindOf(events)}, not an array`,
    )
  }
  return { ts, events, rank }
}

/** One event, or why it is skipped (a SkippedEvent has no `type`). */
function readEvent(raw: unknown, index: number): KvCacheEvent | SkippedEvent {
  const positional = Array.isArray(raw)
  if (!positional && !isMap(raw)) {
    return skip(index, 'not_an_event', `events[${index}] is a ${kindOf(raw)}`)
  }
  const tag = positional ? raw[0] : own(raw, 'type')
  if (typeof tag !== 'string') {
    return skip(index, 'no_type', `events[${index}] has no string type tag`)
  }
  const fields = fieldsOf(tag)
  if (fields === undefined) {
    return skip(index, 'unknown_type', `events[${index}] is of a type not known here`)
  }
  const values: unknown[] = positional ? withoutEventVersion(tag, raw) : []
  const record: WireRecord = { type: tag }
  fields.forEach((field, i) => {
    const present = positional ? i + 1 < values.length : Object.hasOwn(raw, field.wire)
    if (present) record[field.key] = positional ? values[i + 1] : raw[field.wire]
    else if (field.presence === 'nullable') record[field.key] = null
  })
  const parsed = schemaOf[tag as KvCacheEvent['type']].safeParse(record)
  if (!parsed.success) {
    const field = parsed.error.issues[0]?.path[0]
    const wire = typeof field === 'string' ? (wireNameOf.get(field) ?? 'event') : 'event'
    return skip(index, `invalid_${wire}`, describe(parsed.error, `events[${index}]`))
  }
  const event = parsed.data
  // A GPU block holds tokens; size 0 is only the offloading connector's placeholder.
  if (event.type === 'BlockStored' && event.blockSize === 0 && isGpu(event.medium)) {
    return skip(index, 'invalid_block_size', `events[${index}].blockSize: 0 on the GPU tier`)
  }
  return event
}

const isGpu = (medium: string | null) => medium === null || medium === 'GPU'

/**
 * The typed extra keys of vLLM PR #55488 (docs/vllm-wire.md §1.4) declare `event_version`
 * (an int) right after `lora_name`, where a legacy array otherwise has `extra_keys` (a
 * list or nil): an int there is that version, and the fields after it move up by one. A
 * map names its keys, so only arrays need this.
 */
function withoutEventVersion(tag: string, raw: unknown[]): unknown[] {
  const at = 8
  const value = raw[at]
  if (tag !== 'BlockStored' || !(typeof value === 'number' || typeof value === 'bigint')) return raw
  return [...raw.slice(0, at), ...raw.slice(at + 1)]
}

function skip(index: number, reason: SkippedEvent['reason'], message: string): SkippedEvent {
  return { index, reason, message: `kv-events: ${message}` }
}

function describe(error: z.ZodError, prefix: string): string {
  const shown = error.issues.slice(0, 3).map((issue) => {
    const path = issue.path
      .map((part, i) =>
        typeof part === 'number'
          ? `[${part}]`
          : `${i === 0 && prefix === '' ? '' : '.'}${String(part)}`,
      )
      .join('')
    return `${prefix}${path}` === ''
      ? `(batch): ${issue.message}`
      : `${prefix}${path}: ${issue.message}`
  })
  const more = error.issues.length - shown.length
  return shown.join('; ') + (more > 0 ? `; and ${more} more` : '')
}

function kindOf(value: unknown): string {
  if (value === null || value === undefined) return 'nil'
  if (Array.isArray(value)) return 'array'
  if (value instanceof Uint8Array) return 'bin'
  return typeof value === 'object' ? 'map' : typeof value
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
