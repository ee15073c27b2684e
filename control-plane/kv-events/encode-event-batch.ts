import { z } from 'zod'
import { createMsgpackWriter, type MsgpackWriter } from './msgpack-writer.ts'
import { type PublishedBatch, type PublishedEvent, structFieldsOf } from './vllm-event-structs.ts'

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
 * lora_name) are written even when null. The struct layouts are the publisher's own
 * (`vllm-event-structs.ts`), not the router's.
 */
export function encodeEventBatch(batch: PublishedBatch, encoding: KvEventEncoding): Uint8Array {
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

/** Each field's value, undefined read as the field's default (null when it has none). */
function valuesOf(event: PublishedEvent): { defaults: boolean[]; values: unknown[] } {
  const fields = structFieldsOf(event)
  const values = fields.map(
    (field) => (event as unknown as Record<string, unknown>)[field.key] ?? field.defaultValue,
  )
  const defaults = fields.map((field, i) => field.hasDefault && values[i] === field.defaultValue)
  return { defaults, values }
}

function writeArrayEvent(writer: MsgpackWriter, event: PublishedEvent): void {
  const { defaults, values } = valuesOf(event)
  let length = values.length
  while (length > 0 && defaults[length - 1]) length--
  writer.arrayHeader(1 + length)
  writer.str(event.type)
  for (let i = 0; i < length; i++) writer.value(values[i])
}

function writeMapEvent(writer: MsgpackWriter, event: PublishedEvent): void {
  const fields = structFieldsOf(event)
  const { defaults, values } = valuesOf(event)
  const written = fields.flatMap((field, i) =>
    defaults[i] ? [] : [[field.wire, values[i]] as const],
  )
  writer.mapHeader(1 + written.length)
  writer.str('type')
  writer.str(event.type)
  for (const [wire, value] of written) {
    writer.str(wire)
    writer.value(value)
  }
}
