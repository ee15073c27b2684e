import { describe, expect, it } from 'vitest'
import {
  PodEventIngestor,
  type PodEventIngestorOptionsInput,
} from '../../../control-plane/scorer/pod-event-ingestor.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'

function optionsWith(
  overrides: Partial<PodEventIngestorOptionsInput>,
): PodEventIngestorOptionsInput {
  return {
    pod: 'pod-a',
    model: 'model-a',
    index: createMemoryKvIndex(),
    replayEndpoint: null,
    onReady: () => {},
    onError: () => {},
    ...overrides,
  }
}

describe('PodEventIngestor options', () => {
  it('starts cold and ready without a replay endpoint', async () => {
    const ready: boolean[] = []
    const ingestor = new PodEventIngestor(optionsWith({ onReady: (value) => ready.push(value) }))
    await ingestor.start()
    expect(ready).toEqual([false, true])
    expect(ingestor.counters.replays).toBe(0)
  })

  it.each([
    [{ replayTimeoutMs: 0 }, /^pod event ingestor: replayTimeoutMs /],
    [{ replayTimeoutMs: 1.5 }, /^pod event ingestor: replayTimeoutMs /],
    [{ replayTimeoutMs: 2 ** 31 }, /^pod event ingestor: replayTimeoutMs /],
    [{ onError: undefined as never }, /^pod event ingestor: onError /],
  ])('refuses %o when created', (bad, message) => {
    expect(() => new PodEventIngestor(optionsWith(bad))).toThrow(
      expect.objectContaining({ code: 'invalid_config', message: expect.stringMatching(message) }),
    )
  })
})
