import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { encode } from '@msgpack/msgpack'
import { describe, expect, it } from 'vitest'
import { Publisher } from 'zeromq'
import { createTokenizer } from '../../../control-plane/tokenizer/create-tokenizer.ts'
import { adminPods, lookup, model, type Stack, until } from '../../support/scorer-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

// vLLM's event vocabulary beyond one GPU group (docs/vllm-wire.md §1.7, §1.8), sent by a
// raw publisher written from the doc: a hybrid model's groups with the attention group's
// own block size, and the OffloadingConnector's CPU placeholders in the same batch.

const stacks = useScorerStacks()

const prompt = `${'The quick brown fox jumps over the lazy dog. '.repeat(40)}Tail.`
const tokenIds = createTokenizer('qwen3').encode(prompt)

async function fakePod(): Promise<{ stack: Stack; batch: (events: unknown[]) => Promise<void> }> {
  const pub = new Publisher({ linger: 0 })
  await pub.bind('tcp://127.0.0.1:*')
  stacks.closing(pub)
  const server: Server = createServer((req, res) => {
    req.resume()
    res.writeHead(req.url === '/metrics' ? 200 : 404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  stacks.defer(() => new Promise((resolve) => server.close(resolve)))
  const http = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const stack = await stacks.start({
    pods: 0,
    extraPods: [{ name: 'fake', http, events: pub.lastEndpoint as string, replay: null }],
  })
  let seq = 0n
  return {
    stack,
    async batch(events) {
      const frame = Buffer.alloc(8)
      frame.writeBigUInt64BE(seq++)
      const payload = encode([Date.now() / 1000, events, 0], { useBigInt64: true })
      await pub.send(['kv@fake@m', frame, payload])
    },
  }
}

function stored(hashes: bigint[], blockSize: number, extra: Record<string, unknown>) {
  return {
    type: 'BlockStored',
    block_hashes: hashes,
    parent_block_hash: null,
    token_ids: blockSize === 0 ? [] : tokenIds.slice(0, hashes.length * blockSize),
    block_size: blockSize,
    lora_id: null,
    medium: 'GPU',
    lora_name: null,
    ...extra,
  }
}

const fakeOf = async (stack: Stack) =>
  (await lookup(stack, { model, prompt })).pods.find((p) => p.pod === 'fake')

describe('the scorer and vLLM’s whole event vocabulary', () => {
  it('keys requests with a hybrid model’s attention block size, and ignores its window group', async () => {
    const { stack, batch } = await fakePod()
    const blocks32 = Math.floor(tokenIds.length / 32)
    const hashes = Array.from({ length: 2 * blocks32 }, (_, i) => 0xabcdef00n + BigInt(i))
    const attention = hashes.filter((_, i) => i % 2 === 1)
    // Window group first (group 0, 16-token blocks), then the attention group (32).
    const events = [
      stored(hashes, 16, {
        group_idx: 0,
        kv_cache_spec_kind: 'sliding_window',
        kv_cache_spec_sliding_window: 64,
      }),
      stored(attention, 32, { group_idx: 1, kv_cache_spec_kind: 'full_attention' }),
      // The window group evicts what it left behind: hashes the attention group holds too.
      { type: 'BlockRemoved', block_hashes: attention.slice(0, 4), medium: 'GPU', group_idx: 0 },
    ]
    await until(async () => {
      await batch(events)
      return ((await fakeOf(stack))?.matchedBlocks ?? 0) === blocks32
    })
    const fake = await fakeOf(stack)
    expect(fake?.matchedTokens).toBe(
      Math.min(blocks32 * 32, Math.floor((tokenIds.length - 1) / 32) * 32),
    )
  })

  it('keeps CPU placeholders as tier holdings (GET /admin/pods), never as GPU blocks', async () => {
    const { stack, batch } = await fakePod()
    const blocks = Math.floor(tokenIds.length / 16)
    const hashes = Array.from({ length: blocks }, (_, i) => 0x1234n + BigInt(i))
    await until(async () => {
      await batch([
        stored(hashes.slice(0, 3), 16, {}),
        stored(hashes, 0, { medium: 'CPU' }),
        stored([99n], 0, { medium: 'CPU' }),
      ])
      return ((await fakeOf(stack))?.matchedBlocks ?? 0) === 3
    })
    const report = await adminPods(stack)
    const fake = report.pools[0]?.pods.find((pod) => pod.name === 'fake')
    expect(fake?.tiers).toEqual({ CPU: blocks + 1 })
  })
})
