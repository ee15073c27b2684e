import { Decoder } from '@msgpack/msgpack'
import type { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { EventBatch } from './kv-cache-event.ts'
import { fieldsOf } from './kv-event-fields.ts'

/**
 * Reads a `KVEventBatch` payload from any vLLM release we know of, and from
 * llm-d-inference-sim: the batch as an array `[ts, events, dp_rank]` or a map; each event
 * as a legacy array `[tag, …fields]` or a map with "type"; hashes in any int width or as
 * `bin`. Unknown keys, extra trailing fields and events of unknown types are skipped
 * (newer vLLM adds them). Anything else throws KinfError('invalid_request'); the process
 * never sees a raw decoder error.
 */
export function decodeEventBatch(bytes: Uint8Array): EventBatch {
  const parsed = EventBatch.safeParse(toBatchRecord(readMsgpack(bytes)))
  if (!parsed.success) {
    throw new KinfError(
      'invalid_request',
      `kv-events: invalid event batch: ${describe(parsed.error)}`,
    )
  }
  return parsed.data
}

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

function toBatchRecord(raw: unknown): WireRecord {
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
  const known = events.map(toEventRecord).filter((event) => event !== undefined)
  return { ts, events: known, dataParallelRank: rank }
}

/** Names the fields of one event; undefined for a tag this version does not know. */
function toEventRecord(raw: unknown, index: number): WireRecord | undefined {
  const positional = Array.isArray(raw)
  if (!positional && !isMap(raw)) {
    throw new KinfError('invalid_request', `kv-events: events[${index}] is a ${kindOf(raw)}`)
  }
  const tag = positional ? raw[0] : own(raw, 'type')
  if (typeof tag !== 'string') {
    throw new KinfError('invalid_request', `kv-events: events[${index}] has no string type tag`)
  }
  const fields = fieldsOf(tag)
  if (fields === undefined) return undefined
  const record: WireRecord = { type: tag }
  fields.forEach((field, i) => {
    const present = positional ? i + 1 < raw.length : Object.hasOwn(raw, field.wire)
    if (present) record[field.key] = positional ? raw[i + 1] : raw[field.wire]
    else if (field.presence === 'nullable') record[field.key] = null
  })
  return record
}

function describe(error: z.ZodError): string {
  const shown = error.issues.slice(0, 3).map((issue) => {
    const path = issue.path
      .map((part, i) =>
        typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`,
      )
      .join('')
    return `${path || '(batch)'}: ${issue.message}`
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
