import { afterEach, describe, expect, it } from 'vitest'
import { createKvEventPublisher } from '../../../../control-plane/kv-events/create-kv-event-publisher.ts'
import type { KvEventEncoding } from '../../../../control-plane/kv-events/encode-event-batch.ts'
import type { EngineKvEvent } from '../../../../control-plane/lab/sim/engine/engine-kv-event.ts'
import {
  SimKvEventsOptions,
  type SimKvEventsOptionsInput,
} from '../../../../control-plane/lab/sim/engine/kv-events-options.ts'
import type { EngineRequestInput } from '../../../../control-plane/lab/sim/engine/vllm-engine.ts'
import { wireEventMapper } from '../../../../control-plane/lab/sim/to-wire-event.ts'
import { rawBatch, rawEvents, rawFramesOf } from '../../../support/raw-kv-events.ts'
import {
  range,
  engineRequest as request,
  runInTurn,
  simEngine,
} from '../../../support/sim-engine.ts'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/**
 * Runs requests through an engine configured with `kvEvents`, publishes each step's events
 * as a pod does, and reads them back from a bare SUB socket with a plain msgpack decoder.
 */
async function onTheWire(
  kvEvents: SimKvEventsOptionsInput,
  requests: EngineRequestInput[],
  options: { encoding?: KvEventEncoding; kvTokens?: number } = {},
) {
  const parsed = SimKvEventsOptions.parse(kvEvents)
  const engine = simEngine(options.kvTokens ?? 50_000, 1, parsed)
  const batches: EngineKvEvent[][] = runInTurn(engine, requests)
    .map((step) => step.events)
    .filter((events) => events.length > 0)
  const publisher = await createKvEventPublisher({
    endpoint: 'tcp://127.0.0.1:*',
    topic: 'kv@pod@model',
    encoding: options.encoding ?? 'map',
  })
  cleanups.push(() => publisher.close())
  const frames = await rawFramesOf(publisher)
  cleanups.push(frames.close)
  const toWire = wireEventMapper(parsed)
  const messages = await frames.publishAll(batches.map((events) => events.map(toWire)))
  return { batches, messages, events: messages.map((m) => rawEvents(m[2] as Buffer)) }
}

type RawMap = Record<string, unknown>
const stored = (events: unknown[][]) =>
  events.flat().filter((e) => (e as RawMap).type === 'BlockStored') as RawMap[]
const hashesOf = (event: EngineKvEvent | undefined) =>
  event && event.type !== 'AllBlocksCleared' ? event.blockHashes : []

describe('a simulated pod’s KV events, read with a plain msgpack decoder', () => {
  it('by default: [ts (float64), events, rank], BlockStored keyed in vLLM’s order, extra_keys per block', async () => {
    const { batches, messages, events } = await onTheWire({}, [request('a', range(1, 40), 1)])
    const payload = messages[0]?.[2] as Buffer
    expect(payload[1]).toBe(0xcb)
    const [ts, , rank] = rawBatch(payload)
    expect(ts).toBe(1_700_000_000)
    expect(rank).toBe(0)
    const [event] = stored(events)
    expect(Object.keys(event ?? {})).toEqual([
      'type',
      'block_hashes',
      'parent_block_hash',
      'token_ids',
      'block_size',
      'lora_id',
      'medium',
      'lora_name',
      'extra_keys',
    ])
    expect(event).toEqual({
      type: 'BlockStored',
      block_hashes: hashesOf(batches[0]?.[0]),
      parent_block_hash: null,
      token_ids: range(1, 32),
      block_size: 16,
      lora_id: null,
      medium: 'GPU',
      lora_name: null,
      extra_keys: [null, null],
    })
  })

  it('LoRA and cache_salt: plain tuples, the salt in the first block only, lora_id as assigned', async () => {
    const { events } = await onTheWire({}, [
      request('a', range(1, 40), 1, { loraName: 'sql', cacheSalt: 'tenant' }),
    ])
    expect(stored(events)[0]).toMatchObject({
      lora_id: 1,
      lora_name: 'sql',
      extra_keys: [['sql', 'tenant'], ['sql']],
    })
  })

  it('multimodal inputs as (identifier, offset) pairs', async () => {
    const multimodal = [{ identifier: 'img-7', offset: 20, length: 20 }]
    const { events } = await onTheWire({}, [request('a', range(1, 40), 1, { multimodal })])
    expect(stored(events)[0]?.extra_keys).toEqual([null, [['img-7', 4]]])
  })

  it('typed extra keys (PR #55488): tagged maps, event_version omitted as its default in maps', async () => {
    const multimodal = [{ identifier: 'img-7', offset: 20, length: 20 }]
    const input = { loraName: 'sql', cacheSalt: 'tenant', multimodal }
    const { events } = await onTheWire({ extraKeys: 'typed' }, [
      request('a', range(1, 40), 1, input),
    ])
    const [event] = stored(events)
    expect(event).not.toHaveProperty('event_version')
    expect(event?.extra_keys).toEqual([
      [
        { type: 'lora', name: 'sql' },
        { type: 'cache_salt', salt: 'tenant' },
      ],
      [
        { type: 'lora', name: 'sql' },
        { type: 'mm', modality: 'image', hash: 'img-7', block_offset: 4 },
      ],
    ])
    const legacy = await onTheWire({ extraKeys: 'typed' }, [request('a', range(1, 40), 1, input)], {
      encoding: 'array',
    })
    const array = legacy.events[0]?.[0] as unknown[]
    // Positions: tag, hashes, parent, tokens, block_size, lora_id, medium, lora_name, event_version, extra_keys.
    expect(array[8]).toBe(1)
    expect(array[9]).toEqual(event?.extra_keys)
  })

  it('omits extra_keys as releases before PR #33304 did', async () => {
    const { events } = await onTheWire({ extraKeys: 'omitted' }, [request('a', range(1, 40), 1)])
    expect(stored(events)[0]).not.toHaveProperty('extra_keys')
  })

  it('group fields on a single-group model when asked: group_idx 0 and full_attention', async () => {
    const { events } = await onTheWire(
      { groupFields: true },
      [request('a', range(1, 800), 1), request('b', range(10_000, 1000), 1)],
      { kvTokens: 16 * 101 },
    )
    expect(stored(events)[0]).toMatchObject({ group_idx: 0, kv_cache_spec_kind: 'full_attention' })
    expect(stored(events)[0]).not.toHaveProperty('kv_cache_spec_sliding_window')
    const removed = events.flat().find((e) => (e as RawMap).type === 'BlockRemoved')
    expect(Object.keys(removed as RawMap)).toEqual(['type', 'block_hashes', 'medium', 'group_idx'])
  })

  it('a hybrid model in the legacy array layout: each field at its position', async () => {
    const { batches, events } = await onTheWire(
      { hybrid: { slidingWindow: 64, slidingWindowBlockSize: 32 } },
      [request('a', range(1, 100), 1)],
      { encoding: 'array' },
    )
    const [full, window] = events[0] as unknown[][]
    expect(full).toEqual([
      'BlockStored',
      hashesOf(batches[0]?.[0]),
      null,
      range(1, 96),
      16,
      null,
      'GPU',
      null,
      new Array(6).fill(null),
      0,
      'full_attention',
    ])
    expect(window).toEqual([
      'BlockStored',
      hashesOf(batches[0]?.[1]),
      null,
      range(1, 96),
      32,
      null,
      'GPU',
      null,
      [null, null, null],
      1,
      'sliding_window',
      64,
    ])
  })

  it('CPU offload: placeholder CPU events in the same message, after the GPU ones', async () => {
    // A request's copies complete during the next one's step, and c's store evicts a's.
    const { events } = await onTheWire(
      { cpuOffload: { capacityBlocks: 60 } },
      [
        request('a', range(1, 800), 1),
        request('b', range(10_000, 40), 1),
        request('c', range(20_000, 800), 1),
      ],
      { kvTokens: 16 * 101 },
    )
    const mixed = events.find((batch) => new Set(batch.map((e) => (e as RawMap).medium)).size > 1)
    const media = (mixed ?? []).map((e) => (e as RawMap).medium)
    expect(media.indexOf('CPU')).toBeGreaterThan(media.lastIndexOf('GPU'))
    const cpu = (mixed ?? []).find((e) => (e as RawMap).medium === 'CPU') as RawMap
    expect(Object.keys(cpu)).toEqual([
      'type',
      'block_hashes',
      'parent_block_hash',
      'token_ids',
      'block_size',
      'lora_id',
      'medium',
      'lora_name',
      'group_idx',
    ])
    expect(cpu).toMatchObject({
      block_size: 0,
      token_ids: [],
      parent_block_hash: null,
      group_idx: 0,
    })
    const cpuRemoved = events
      .flat()
      .find((e) => (e as RawMap).type === 'BlockRemoved' && (e as RawMap).medium === 'CPU')
    expect(cpuRemoved).toMatchObject({ medium: 'CPU', group_idx: 0 })
  })

  it('self-describing CPU events carry the block’s tokens, parent and size', async () => {
    // The copies are announced with the step during which they complete: b's.
    const { events } = await onTheWire(
      { cpuOffload: { capacityBlocks: 60, selfDescribing: true } },
      [request('a', range(1, 40), 1), request('b', range(500, 20), 1)],
    )
    const cpu = stored(events).find((e) => e.medium === 'CPU')
    expect(cpu).toMatchObject({
      token_ids: range(1, 16),
      block_size: 16,
      parent_block_hash: null,
      group_idx: 0,
      kv_cache_spec_kind: 'full_attention',
    })
  })

  it('report mode "full" re-announces reused blocks from the start', async () => {
    const { events } = await onTheWire({ reportMode: 'full' }, [
      request('a', range(1, 40), 1),
      request('b', [...range(1, 40), ...range(500, 30)], 1),
    ])
    const [first, reused] = stored(events)
    expect(reused).toMatchObject({ parent_block_hash: null, block_hashes: first?.block_hashes })
  })
})
