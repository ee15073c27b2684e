import { z } from 'zod'
import type { EventBatch, KvCacheEvent } from './kv-cache-event.ts'
import { eventFields, type WireField } from './kv-event-fields.ts'
import { createMsgpackWriter, type MsgpackWriter } from './msgpack-writer.ts'

/**
 * How events are laid out (docs/vllm-wire.md §1.4):
 * - `array`: legacy `array_like` structs, `[tag, field1, field2, …]`;
 * - `map`: vLLM PR #42892 and later, `{type: tag, field: value, …}`.
 */
export const KvEventEncoding = z.enum(['map', 'array'])
export type KvEventEncoding = z.infer<typeof KvEventEncoding>

/**
 * msgpack bytes of a batch, identical to what vLLM's msgspec encoder writes. The batch is
 * always `[ts, events, data_parallel_rank]` with ts as float64; omit_defaults drops a null
 * rank (a trailing default) but writes 0. Events follow `encoding`, with omit_defaults
 * applied as msgspec does: an array drops only TRAILING fields that equal their default, a
 * map drops every such field. Fields without a default (parent_block_hash, lora_id, medium,
 * lora_name) are written even when null.
 */
export function encodeEventBatch(batch: EventBatch, encoding: KvEventEncoding): Uint8Array {
  const writer = createMsgpackWriter(64 + batch.events.length * 64)
  const rank = batch.dataParallelRank ?? null
  writer.arrayHeader(rank === null ? 2 : 3)
  writer.float64(batch.ts)
  writer.arrayHeader(batch.events.length)
  for (const event of batch.events) {
    if (encoding === 'map') writeMapEvent(writer, event)
    else writeArrayEvent(writer, event)
  }
  if (rank !== null) writer.int(rank)
  return writer.finish()
}

function valuesOf(event: KvCacheEvent, fields: readonly WireField[]): unknown[] {
  // undefined and null both mean "the default" for optional fields.
  return fields.map((field) => (event as Record<string, unknown>)[field.key] ?? null)
}

function writeArrayEvent(writer: MsgpackWriter, event: KvCacheEvent): void {
  const fields: readonly WireField[] = eventFields[event.type]
  const values = valuesOf(event, fields)
  let length = fields.length
  while (length > 0 && fields[length - 1]?.presence === 'default' && values[length - 1] === null) {
    length--
  }
  writer.arrayHeader(1 + length)
  writer.str(event.type)
  for (let i = 0; i < length; i++) writer.value(values[i])
}

function writeMapEvent(writer: MsgpackWriter, event: KvCacheEvent): void {
  const fields: readonly WireField[] = eventFields[event.type]
  const values = valuesOf(event, fields)
  const written = fields.flatMap((field, i) =>
    field.presence === 'default' && values[i] === null ? [] : [[field.wire, values[i]] as const],
  )
  writer.mapHeader(1 + written.length)
  writer.str('type')
  writer.str(event.type)
  for (const [wire, value] of written) {
    writer.str(wire)
    writer.value(value)
  }
}
