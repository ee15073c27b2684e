import { describe, expect, it } from 'vitest'
import { decodeEventBatch } from '../../../control-plane/kv-events/decode-event-batch.ts'
import { encodeEventBatch } from '../../../control-plane/kv-events/encode-event-batch.ts'
import { toPodEvents } from '../../../control-plane/kv-events/to-pod-events.ts'
import { wireEventMapper } from '../../../control-plane/lab/sim/to-wire-event.ts'
import { computeBlockKeys } from '../../../shared/kv-index/block-keys.ts'
import type { KvIndex } from '../../../shared/kv-index/kv-index.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { engineRequest, range, runInTurn, simEngine } from '../../support/sim-engine.ts'

// The simulator writes extra_keys as vLLM does (plain tuples, or PR #55488's typed structs)
// with its own code; the router reads them with its own. Both forms, in both encodings,
// must give the index the same keys: the LoRA name and salt as the router keys requests,
// and each image's identity in the blocks it covers (docs/vllm-wire.md §1.9).

const model = 'm'
const prompt = range(20_000, 96)
const image = (identifier: string) => [{ identifier, offset: 40, length: 32 }]
const request = { loraName: 'adapter-1', cacheSalt: 'tenant-1' }

async function indexFrom(
  extraKeys: 'plain' | 'typed',
  encoding: 'map' | 'array',
  identifier: string,
): Promise<KvIndex> {
  const kvEvents = { extraKeys, groupFields: true }
  const engine = simEngine(16_384, 3, kvEvents, new Map([['adapter-1', 1]]))
  const steps = runInTurn(engine, [
    engineRequest('r', prompt, 4, { ...request, multimodal: image(identifier) }),
  ])
  const toWire = wireEventMapper({ extraKeys, groupFields: true, hybrid: null })
  const index = createMemoryKvIndex()
  let seq = 0n
  for (const step of steps) {
    if (step.events.length === 0) continue
    const bytes = encodeEventBatch({ ts: 0, events: step.events.map(toWire) }, encoding)
    await index.apply('pod', model, toPodEvents(decodeEventBatch(bytes).events).index, seq++)
  }
  return index
}

describe('extra keys from the simulator, as vLLM writes them', () => {
  it('index the same keys from plain and typed keys, in both encodings', async () => {
    const router = computeBlockKeys(prompt, 16, { model, ...request })
    const forms = [
      await indexFrom('plain', 'map', 'img-A'),
      await indexFrom('plain', 'array', 'img-A'),
      await indexFrom('typed', 'map', 'img-A'),
      await indexFrom('typed', 'array', 'img-A'),
    ]
    // A request keyed without the image (LoRA and salt only) matches up to the image:
    // tokens 40..71 overlap blocks 2, 3 and 4.
    for (const index of forms) expect(await index.lookup(router, ['pod'], 0)).toEqual([2])
    // The pod's own keys, read back with the image: every form holds all 6 blocks.
    const extras = [
      null,
      null,
      'mm\u0000img-A\u00008',
      'mm\u0000img-A\u0000-8',
      'mm\u0000img-A\u0000-24',
      null,
    ]
    const withImage = computeBlockKeys(prompt, 16, { model, ...request }, extras)
    for (const index of forms) expect(await index.lookup(withImage, ['pod'], 0)).toEqual([6])
    // Another image behind the same placeholder tokens matches only the text before it.
    const other = await indexFrom('typed', 'map', 'img-B')
    expect(await other.lookup(withImage, ['pod'], 0)).toEqual([2])
    // Without the salt nothing matches: the typed form kept it.
    const unsalted = computeBlockKeys(prompt, 16, { model, loraName: 'adapter-1' }, extras)
    for (const index of forms) expect(await index.lookup(unsalted, ['pod'], 0)).toEqual([0])
  })
})
