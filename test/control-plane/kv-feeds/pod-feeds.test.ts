import { describe, expect, it } from 'vitest'
import { PodFeeds } from '../../../control-plane/kv-feeds/pod-feeds.ts'
import { computeBlockKeys } from '../../../shared/kv-index/block-keys.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { model } from '../../support/scorer-stack.ts'

const source = { pod: 'a', model, events: null, replay: null }
const keys = computeBlockKeys(
  Array.from({ length: 64 }, (_, i) => i),
  16,
  { model, loraName: null, cacheSalt: null },
)

describe('PodFeeds', () => {
  it('keeps a pod’s entries while one runtime uses it, and drops them with the last', async () => {
    const index = createMemoryKvIndex()
    const feeds = new PodFeeds({ index, sharedEvents: false, onError: () => {} })
    const heard: boolean[] = []
    const first = feeds.acquire(source, (ready) => heard.push(ready))
    const second = feeds.acquire(source, () => {})
    expect(second.feed).toBe(first.feed)
    // Without events the pod is never ready: routed on load alone.
    expect(heard).toEqual([false])
    await index.addSpeculative('a', keys, 4, Date.now() + 60_000)
    await first.release()
    await first.release()
    expect(await index.lookup(keys, ['a'], Date.now())).toEqual([4])
    await second.release()
    expect(await index.lookup(keys, ['a'], Date.now())).toEqual([0])
    expect(feeds.get('a')).toBeUndefined()
  })

  it('feeds a pod from one source at a time', async () => {
    const feeds = new PodFeeds({
      index: createMemoryKvIndex(),
      sharedEvents: false,
      onError: () => {},
    })
    const lease = feeds.acquire(source, () => {})
    expect(() => feeds.acquire({ ...source, model: 'other' }, () => {})).toThrow(/another source/)
    await lease.release()
    const again = feeds.acquire({ ...source, model: 'other' }, () => {})
    await again.release()
  })
})
