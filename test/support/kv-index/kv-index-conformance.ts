import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { computeBlockKeys } from '../../../shared/kv-index/block-keys.ts'
import type { IndexEvent, KvIndex } from '../../../shared/kv-index/kv-index.ts'
import {
  blockSize,
  chainOf,
  cleared,
  engineHashes,
  noChanges,
  promptTokens,
  removed,
  stored,
  storedRange,
} from './kv-index-fixtures.ts'
import { randomKvWorkload } from './random-kv-workload.ts'
import { ReferenceKvIndex } from './reference-kv-index.ts'

const model = 'model-a'

/**
 * The KvIndex contract, run against every implementation: what a lookup must answer after
 * any sequence of vLLM events, speculative entries and pod drops. `createIndex` returns a
 * fresh, empty index each time (closed after each test).
 */
export function describeKvIndexConformance(
  name: string,
  createIndex: () => Promise<KvIndex>,
): void {
  describe(`${name}: KvIndex conformance`, () => {
    let index: KvIndex
    beforeEach(async () => {
      index = await createIndex()
    })
    afterEach(async () => {
      await index.close()
    })

    const tokens = promptTokens(8)
    const hashes = engineHashes(8, 100n)
    const chain = chainOf(tokens)

    it('a stored chain matches its full length on its pod and nothing elsewhere', async () => {
      const result = await index.apply('pod-a', model, storedRange(tokens, hashes, 0, 8, 8))
      expect(result).toEqual({ ...noChanges, stored: 8 })
      expect(await index.lookup(chain, ['pod-a', 'pod-b'], 0)).toEqual([8, 0])
      expect(await index.lookup(chain.subarray(0, 6), ['pod-a'], 0)).toEqual([3])
      expect(await index.size()).toEqual({ entries: 8, pods: 1 })
    })

    it('applies a batch once per seq, so replicas sharing the index can all apply a stream', async () => {
      const [first, second] = storedRange(tokens, hashes, 0, 8, 4)
      expect((await index.apply('pod-a', model, [first as IndexEvent], 5n)).stored).toBe(4)
      const again = await index.apply('pod-a', model, [first as IndexEvent], 5n)
      expect(again).toEqual({ ...noChanges, duplicate: true })
      expect((await index.apply('pod-a', model, [second as IndexEvent], 4n)).duplicate).toBe(true)
      expect((await index.apply('pod-a', model, [second as IndexEvent], 6n)).stored).toBe(4)
      // Removing once, even if two replicas deliver the removal, keeps nothing.
      const removal: IndexEvent = { type: 'removed', engineHashes: hashes.slice(4) }
      await index.apply('pod-a', model, [removal], 7n)
      await index.apply('pod-a', model, [removal], 7n)
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([4])
      // Another pod's seqs are its own; a dropped pod's stream may start again at 0.
      expect((await index.apply('pod-b', model, [first as IndexEvent], 0n)).stored).toBe(4)
      await index.dropPod('pod-a')
      expect((await index.apply('pod-a', model, [first as IndexEvent], 0n)).stored).toBe(4)
    })

    it('chains BlockStored onto a parent stored in an earlier batch', async () => {
      for (const event of storedRange(tokens, hashes, 0, 8, 3)) {
        await index.apply('pod-a', model, [event])
      }
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([8])
    })

    it('derives from split BlockStored events exactly the keys computeBlockKeys gives', async () => {
      const long = promptTokens(40, 7)
      const longHashes = engineHashes(40, 5_000n)
      const salt = { cacheSalt: 'tenant-1', loraName: 'adapter' }
      const events = storedRange(long, longHashes, 0, 40, 7, salt)
      await index.apply('pod-a', model, events.slice(0, 2))
      await index.apply('pod-a', model, events.slice(2))
      // A trailing partial block is not a block: the same keys with or without it.
      const keys = computeBlockKeys([...long, 1, 2], blockSize, { model, ...salt })
      expect(keys.length).toBe(80)
      expect(await index.lookup(keys, ['pod-a'], 0)).toEqual([40])
    })

    it('keys a block’s extras (a multimodal input) into that block and its followers only', async () => {
      const extras = [null, null, 'mm\u0000img-A\u00000', 'mm\u0000img-A\u0000-4']
      const event = stored(hashes.slice(0, 4), null, tokens.slice(0, 16))
      await index.apply('pod-a', model, [{ ...event, blockExtras: extras } as IndexEvent])
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([2])
      const withImage = computeBlockKeys(tokens.slice(0, 16), blockSize, { model }, extras)
      expect(await index.lookup(withImage, ['pod-a'], 0)).toEqual([4])
      const otherImage = computeBlockKeys(tokens.slice(0, 16), blockSize, { model }, [
        null,
        null,
        'mm\u0000img-B\u00000',
        'mm\u0000img-B\u0000-4',
      ])
      expect(await index.lookup(otherImage, ['pod-a'], 0)).toEqual([2])
    })

    it('matches the longest consecutive prefix: a removed middle block cuts it there', async () => {
      await index.apply('pod-a', model, storedRange(tokens, hashes, 0, 8, 4))
      const result = await index.apply('pod-a', model, [removed(hashes[3] as bigint)])
      expect(result).toEqual({ ...noChanges, removed: 1 })
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([3])
      expect(await index.size()).toEqual({ entries: 7, pods: 1 })
    })

    it('forgets removed blocks, and a pod with none left', async () => {
      await index.apply('pod-a', model, storedRange(tokens, hashes, 0, 2, 2))
      expect(await index.apply('pod-a', model, [removed(...hashes.slice(0, 2))])).toEqual({
        ...noChanges,
        removed: 2,
      })
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([0])
      expect(await index.size()).toEqual({ entries: 0, pods: 0 })
    })

    it('takes a block announced again (report mode "full") once: one removal forgets it', async () => {
      // vLLM's kv_cache_report_mode "full" re-announces the blocks a request reuses, with no
      // removal of their own (docs/vllm-wire.md §1.10): stores must balance removals.
      const events = storedRange(tokens, hashes, 0, 4, 4)
      expect(await index.apply('pod-a', model, events)).toEqual({ ...noChanges, stored: 4 })
      expect(await index.apply('pod-a', model, events)).toEqual({ ...noChanges, stored: 4 })
      expect(await index.storedBlocks(['pod-a'])).toEqual([4])
      expect(await index.size()).toEqual({ entries: 4, pods: 1 })
      await index.apply('pod-a', model, [removed(hashes[1] as bigint)])
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([1])
      expect(await index.storedBlocks(['pod-a'])).toEqual([3])
      expect(await index.apply('pod-a', model, [removed(hashes[1] as bigint)])).toEqual({
        ...noChanges,
        unknownRemovals: 1,
      })
      await index.apply('pod-a', model, [removed(...hashes.slice(0, 4))])
      expect(await index.storedBlocks(['pod-a'])).toEqual([0])
      expect(await index.size()).toEqual({ entries: 0, pods: 0 })
    })

    it('takes re-announcements within one batch once, before and after a removal', async () => {
      const events = storedRange(tokens, hashes, 0, 4, 4)
      const batch = [...events, ...events, removed(hashes[1] as bigint)]
      expect(await index.apply('pod-a', model, batch)).toEqual({
        ...noChanges,
        stored: 8,
        removed: 1,
      })
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([1])
      // Removed, then stored again (and re-announced): held once more, until one removal.
      await index.apply('pod-a', model, [removed(hashes[1] as bigint), ...events, ...events])
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([4])
      expect(await index.storedBlocks(['pod-a'])).toEqual([4])
      await index.apply('pod-a', model, [removed(hashes[1] as bigint)])
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([1])
    })

    it('holds a block while any of the engine hashes mapping to it is stored', async () => {
      const other = engineHashes(4, 900n)
      await index.apply('pod-a', model, storedRange(tokens, hashes, 0, 4, 4))
      await index.apply('pod-a', model, storedRange(tokens, other, 0, 4, 2))
      await index.apply('pod-a', model, [removed(...hashes.slice(0, 4))])
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([4])
      expect(await index.size()).toEqual({ entries: 4, pods: 1 })
    })

    it('lets an engine hash stored again for another block mean that block', async () => {
      // Impossible from vLLM (a hash is a function of the content), possible from garbage:
      // the newest mapping wins, and the block it no longer maps to is no longer held.
      const twice = [hashes[0] as bigint, hashes[0] as bigint]
      expect(await index.apply('pod-a', model, [stored(twice, null, tokens.slice(0, 8))])).toEqual({
        ...noChanges,
        stored: 2,
      })
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([0])
      expect(await index.lookup(chain.subarray(2), ['pod-a'], 0)).toEqual([1])
      expect(await index.size()).toEqual({ entries: 1, pods: 1 })
      await index.apply('pod-a', model, storedRange(tokens, hashes, 0, 3, 3))
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([3])
      expect(await index.apply('pod-a', model, [removed(hashes[0] as bigint)])).toEqual({
        ...noChanges,
        removed: 1,
      })
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([0])
      expect(await index.size()).toEqual({ entries: 2, pods: 1 })
    })

    it('AllBlocksCleared drops the pod, and later events of the batch count afresh', async () => {
      await index.apply('pod-a', model, storedRange(tokens, hashes, 0, 8, 8))
      await index.apply('pod-b', model, storedRange(tokens, hashes, 0, 8, 8))
      await index.addSpeculative('pod-a', chain, 8, 10_000)
      const batch = [cleared, ...storedRange(tokens, hashes, 0, 2, 2), stored([7n], 108n, [1])]
      expect(await index.apply('pod-a', model, batch)).toEqual({
        ...noChanges,
        stored: 2,
        unknownParents: 1,
      })
      expect(await index.lookup(chain, ['pod-a', 'pod-b'], 0)).toEqual([2, 8])
    })

    it('counts each pod its stored blocks, speculative entries left out', async () => {
      await index.apply('pod-a', model, storedRange(tokens, hashes, 0, 8, 8))
      await index.apply('pod-b', model, storedRange(tokens, hashes, 0, 5, 8))
      await index.addSpeculative('pod-c', chainOf(promptTokens(3, 9)), 3, 10_000)
      await index.apply('pod-b', model, [removed(hashes[4] as bigint)])
      expect(await index.storedBlocks(['pod-a', 'pod-b', 'pod-c', 'nobody'])).toEqual([8, 4, 0, 0])
      expect(await index.storedBlocks([])).toEqual([])
    })

    it('dropPod forgets one pod, stored and speculative', async () => {
      await index.apply('pod-a', model, storedRange(tokens, hashes, 0, 8, 8))
      await index.apply('pod-b', model, storedRange(tokens, hashes, 0, 5, 8))
      await index.addSpeculative('pod-a', chainOf(promptTokens(3, 9)), 3, 10_000)
      await index.dropPod('pod-a')
      await index.dropPod('never-seen')
      expect(await index.lookup(chain, ['pod-a', 'pod-b'], 0)).toEqual([0, 5])
      expect(await index.size()).toEqual({ entries: 5, pods: 1 })
      // Nothing of the old pod survives into a new one of the same name.
      await index.apply('pod-a', model, [stored([1n], hashes[0] as bigint, tokens.slice(4, 8))])
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([0])
    })

    it('leaves a BlockStored with an unknown parent unindexed, and counts it', async () => {
      const events = storedRange(tokens, hashes, 0, 8, 4)
      expect(await index.apply('pod-a', model, [events[1] as IndexEvent])).toEqual({
        ...noChanges,
        unknownParents: 1,
      })
      // Its blocks are not parents either: the chain stays cold until the real parent comes.
      await index.apply('pod-a', model, [stored([555n], hashes[7] as bigint, promptTokens(1))])
      expect(await index.lookup(chain.subarray(8), ['pod-a'], 0)).toEqual([0])
      expect(await index.size()).toEqual({ entries: 0, pods: 0 })
      await index.apply('pod-a', model, events)
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([8])
    })

    it('counts removals of hashes it never saw', async () => {
      expect(await index.apply('pod-a', model, [removed(1n, 2n)])).toEqual({
        ...noChanges,
        unknownRemovals: 2,
      })
      await index.apply('pod-a', model, storedRange(tokens, hashes, 0, 2, 2))
      expect(await index.apply('pod-b', model, [removed(hashes[0] as bigint)])).toEqual({
        ...noChanges,
        unknownRemovals: 1,
      })
      expect(await index.lookup(chain, ['pod-a'], 0)).toEqual([2])
    })

    it('keys depend on the LoRA adapter and on cache_salt (first block only)', async () => {
      const lora = { loraName: 'adapter-1' }
      const salt = { cacheSalt: 'secret' }
      await index.apply('lora', model, storedRange(tokens, hashes, 0, 8, 3, lora))
      await index.apply('salted', model, storedRange(tokens, hashes, 0, 8, 3, salt))
      await index.apply('plain', model, storedRange(tokens, hashes, 0, 8, 3))
      const pods = ['lora', 'salted', 'plain']
      expect(await index.lookup(chain, pods, 0)).toEqual([0, 0, 8])
      expect(await index.lookup(chainOf(tokens, model, lora), pods, 0)).toEqual([8, 0, 0])
      expect(await index.lookup(chainOf(tokens, model, salt), pods, 0)).toEqual([0, 8, 0])
      const otherSalt = chainOf(tokens, model, { cacheSalt: 'other' })
      expect(await index.lookup(otherSalt, pods, 0)).toEqual([0, 0, 0])
    })

    it('never shares keys between models', async () => {
      await index.apply('pod-a', 'model-a', storedRange(tokens, hashes, 0, 8, 8))
      await index.apply('pod-b', 'model-b', storedRange(tokens, hashes, 0, 8, 8))
      expect(await index.lookup(chainOf(tokens, 'model-a'), ['pod-a', 'pod-b'], 0)).toEqual([8, 0])
      expect(await index.lookup(chainOf(tokens, 'model-b'), ['pod-a', 'pod-b'], 0)).toEqual([0, 8])
    })

    it('counts speculative entries until they expire, and extends never shortens', async () => {
      await index.addSpeculative('pod-a', chain, 5, 2_000)
      await index.addSpeculative('pod-a', chain, 2, 1_500)
      await index.addSpeculative('pod-b', chain, 3, 1_000)
      expect(await index.lookup(chain, ['pod-a', 'pod-b'], 999)).toEqual([5, 3])
      expect(await index.lookup(chain, ['pod-a', 'pod-b'], 1_000)).toEqual([5, 0])
      await index.addSpeculative('pod-a', chain, 2, 3_000)
      expect(await index.lookup(chain, ['pod-a', 'pod-b'], 2_500)).toEqual([2, 0])
      expect(await index.lookup(chain, ['pod-a', 'pod-b'], 3_000)).toEqual([0, 0])
      expect(await index.size()).toEqual({ entries: 0, pods: 0 })
    })

    it('a stored block outlives the expiry of a speculative entry for it', async () => {
      await index.addSpeculative('pod-a', chain, 8, 1_000)
      await index.apply('pod-a', model, storedRange(tokens, hashes, 0, 3, 3))
      expect(await index.lookup(chain, ['pod-a'], 500)).toEqual([8])
      expect(await index.size()).toEqual({ entries: 8, pods: 1 })
      expect(await index.lookup(chain, ['pod-a'], 1_000)).toEqual([3])
      await index.apply('pod-a', model, [removed(...hashes.slice(0, 3))])
      await index.addSpeculative('pod-a', chain, 2, 2_000)
      expect(await index.lookup(chain, ['pod-a'], 1_500)).toEqual([2])
    })

    it('answers for many pods (more than 32) in one lookup', async () => {
      const pods = Array.from({ length: 70 }, (_, i) => `pod-${i}`)
      for (const [i, pod] of pods.entries()) {
        await index.apply(pod, model, storedRange(tokens, hashes, 0, i % 9, 2))
      }
      await index.addSpeculative('pod-69', chain, 8, 100)
      const expected = pods.map((_, i) => (i === 69 ? 8 : i % 9))
      expect(await index.lookup(chain, pods, 0)).toEqual(expected)
      // A freed pod's place holds nothing for the next pod to take it.
      await index.dropPod('pod-8')
      await index.apply('pod-70', model, storedRange(tokens, hashes, 0, 1, 1))
      const after = await index.lookup(chain, ['pod-8', 'pod-70', 'pod-17', 'pod-69'], 0)
      expect(after).toEqual([0, 1, 8, 8])
    })

    it('answers an empty chain, no pods, unknown pods and repeated pods', async () => {
      await index.apply('pod-a', model, storedRange(tokens, hashes, 0, 8, 8))
      expect(await index.lookup(new Uint32Array(0), ['pod-a', 'x'], 0)).toEqual([0, 0])
      expect(await index.lookup(chain, [], 0)).toEqual([])
      expect(await index.lookup(chain, ['x', 'pod-a', 'y', 'pod-a'], 0)).toEqual([0, 8, 0, 8])
      const unknown = new Uint32Array([1, 2, 3, 4])
      expect(await index.lookup(unknown, ['pod-a'], 0)).toEqual([0])
    })

    it('treats pod names as opaque strings', async () => {
      const pods = ['a', 'sa', 'xa', 'a:b', 'k:a', '', 'ü 🙂']
      for (const [i, pod] of pods.entries()) {
        await index.apply(pod, model, storedRange(tokens, hashes, 0, i + 1, 8))
      }
      expect(await index.lookup(chain, pods, 0)).toEqual([1, 2, 3, 4, 5, 6, 7])
      await index.dropPod('a')
      expect(await index.lookup(chain, pods, 0)).toEqual([0, 2, 3, 4, 5, 6, 7])
    })

    it('indexes nothing from malformed events and stays consistent', async () => {
      const garbage = [
        stored(engineHashes(2, 1n), null, tokens.slice(0, 8), { blockSize: 0 }),
        stored(engineHashes(2, 1n), null, tokens.slice(0, 8), { blockSize: Number.NaN }),
        stored(engineHashes(2, 1n), null, tokens.slice(0, 3)),
        stored([1 as unknown as bigint, 2n], null, tokens.slice(0, 8)),
        { type: 'removed', engineHashes: ['x' as unknown as bigint] } as IndexEvent,
      ]
      expect(await index.apply('pod-a', model, garbage)).toEqual({
        ...noChanges,
        unknownRemovals: 1,
      })
      // More hashes than token blocks, or the reverse: only blocks with both are taken.
      await index.apply('pod-a', model, [stored(hashes.slice(0, 3), null, tokens.slice(0, 8))])
      await index.apply('pod-b', model, [stored(hashes.slice(0, 1), null, tokens.slice(0, 8))])
      expect(await index.lookup(chain, ['pod-a', 'pod-b'], 0)).toEqual([2, 1])
      expect(await index.size()).toEqual({ entries: 3, pods: 2 })
    })

    it('answers as a plain reference model over thousands of random events', async () => {
      const reference = new ReferenceKvIndex()
      let step = 0
      for (const call of randomKvWorkload(20261130, 3_000)) {
        step++
        if (call.kind === 'apply') {
          const expected = reference.apply(call.pod, call.model, call.events)
          const actual = await index.apply(call.pod, call.model, call.events)
          expect(actual, `step ${step}`).toEqual(expected)
        } else if (call.kind === 'lookup') {
          const expected = reference.lookup(call.chain, call.pods, call.nowMs)
          const actual = await index.lookup(call.chain, call.pods, call.nowMs)
          expect(actual, `step ${step}`).toEqual(expected)
        } else if (call.kind === 'speculate') {
          reference.addSpeculative(call.pod, call.chain, call.blocks, call.expiresAtMs)
          await index.addSpeculative(call.pod, call.chain, call.blocks, call.expiresAtMs)
        } else {
          reference.dropPod(call.pod)
          await index.dropPod(call.pod)
        }
      }
    })
  })
}
