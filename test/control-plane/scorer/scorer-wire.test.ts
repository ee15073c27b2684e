import type { RequestListener } from 'node:http'
import { encode } from '@msgpack/msgpack'
import { describe, expect, it } from 'vitest'
import { Publisher } from 'zeromq'
import { createTokenizer } from '../../../control-plane/tokenizer/create-tokenizer.ts'
import { startLocalHttpServer } from '../../support/local-http-server.ts'
import {
  adminToken,
  decisionOf,
  lookup,
  matchedBlocks,
  metricTotal,
  model,
  type Stack,
  send,
  until,
} from '../../support/scorer-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

const stacks = useScorerStacks()

/** A KV-event batch's sequence number as its frame: 8 bytes, big-endian. */
function seqFrame(value: bigint): Buffer {
  const frame = Buffer.alloc(8)
  frame.writeBigUInt64BE(value)
  return frame
}

/** A raw ZMQ publisher speaking vLLM's wire format, built from the doc, not from our encoder. */
async function rawPublisher() {
  const pub = stacks.closing(new Publisher({ linger: 0 }))
  await pub.bind('tcp://127.0.0.1:*')
  let seq = 0n
  return {
    endpoint: pub.lastEndpoint as string,
    async send(frames: (Buffer | Uint8Array | string)[]) {
      await pub.send(frames)
    },
    async batch(events: unknown[]) {
      await this.payload(encode([Date.now() / 1000, events, 0], { useBigInt64: true }))
    },
    /** Any payload under the next seq. */
    async payload(payload: Uint8Array) {
      await pub.send(['kv@fake@m', seqFrame(seq++), payload])
    },
  }
}

const prompt = `${'The quick brown fox jumps over the lazy dog. '.repeat(40)}Tail.`
const tokenIds = createTokenizer('qwen3').encode(prompt)
const blocks = Math.floor(tokenIds.length / 16)
const hashes = Array.from({ length: blocks }, (_, i) => 0xfedcba9876543210n - BigInt(i))

function storedEvent(encoding: 'map' | 'array') {
  const tokens = tokenIds.slice(0, blocks * 16)
  if (encoding === 'array') return ['BlockStored', hashes, null, tokens, 16, null, 'GPU', null]
  return {
    type: 'BlockStored',
    block_hashes: hashes,
    parent_block_hash: null,
    token_ids: tokens,
    block_size: 16,
    lora_id: null,
    medium: 'GPU',
    lora_name: null,
  }
}

/** The blocks of `prompt` the index holds for the pod "fake". */
const fakeBlocks = (stack: Stack) => matchedBlocks(stack, { model, prompt }, 'fake')

/**
 * A stack with a third-party pod "fake" (a raw publisher and a metrics-only HTTP side) beside
 * a simulated one, once the index holds the blocks "fake" stored.
 */
async function withFakePodIndexed(encoding: 'map' | 'array' = 'map') {
  const publisher = await rawPublisher()
  const stack = await stacks.start({
    pods: 1,
    extraPods: [
      { name: 'fake', http: await metricsOnlyPod(), events: publisher.endpoint, replay: null },
    ],
  })
  // Slow joiner: publish until the scorer's SUB socket receives.
  await until(async () => {
    await publisher.batch([storedEvent(encoding)])
    return (await fakeBlocks(stack)) === blocks
  })
  return { publisher, stack }
}

describe('the scorer on the wire', () => {
  it.each(['map', 'array'] as const)(
    'indexes a third-party vLLM publisher (%s encoding): /admin/lookup shows its blocks',
    async (encoding) => {
      const { stack } = await withFakePodIndexed(encoding)
      const byIds = await lookup(stack, { model, token_ids: tokenIds } as never)
      expect(byIds.pods.find((p) => p.pod === 'fake')?.matchedTokens).toBe(
        Math.floor((tokenIds.length - 1) / 16) * 16,
      )
    },
  )

  it('takes events from pods that connect to its own bound SUB socket, told apart by topic', async () => {
    const stack = await stacks.start({
      pods: 0,
      eventsBind: 'tcp://127.0.0.1:*',
      extraPods: [
        { name: 'connecting-pod', http: await metricsOnlyPod(), events: null, replay: null },
      ],
    })
    const pub = stacks.closing(new Publisher({ linger: 0 }))
    pub.connect(stack.scorer.eventsEndpoint as string)
    let seq = 0n
    await until(async () => {
      const payload = encode([Date.now() / 1000, [storedEvent('map')], 0], { useBigInt64: true })
      await pub.send([`kv@connecting-pod@${model}`, seqFrame(seq++), payload])
      return (await matchedBlocks(stack, { model, prompt }, 'connecting-pod')) === blocks
    })
  })

  it('forgets a pod that goes away', async () => {
    const { stack } = await withFakePodIndexed()
    const matched = async () =>
      (await lookup(stack, { model, prompt })).pods.find((p) => p.pod === 'fake')?.matchedBlocks
    const before = await stack.scorer.index.size()
    await stack.scorer.removePod('fake')
    expect(await matched()).toBe(undefined)
    expect((await stack.scorer.index.size()).entries).toBe(before.entries - blocks)
  })

  it('survives hostile event frames and keeps its index consistent', async () => {
    const { publisher, stack } = await withFakePodIndexed()
    const matched = () => fakeBlocks(stack)
    const seq = Buffer.alloc(8)
    await publisher.send(['kv@fake@m'])
    await publisher.send(['kv@fake@m', seq])
    await publisher.send(['kv@fake@m', Buffer.alloc(3), Buffer.from([0x93])])
    await publisher.send(['kv@fake@m', seq, Buffer.from([0x93, 0xcb, 1, 2])])
    await publisher.send([
      'kv@fake@m',
      seq,
      Buffer.from([0x93, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xdd, 0xff, 0xff, 0xff, 0xff]),
    ])
    // Nothing so far consumed a seq: the index is untouched.
    expect(await matched()).toBe(blocks)
    // Events that cannot be read are skipped one at a time and counted; the batch (and the
    // removal beside them) is applied.
    await publisher.batch([
      { type: 'FrobnicateBlocks', block_hashes: [1n] },
      'junk',
      42,
      { type: 'BlockRemoved', block_hashes: [hashes[3]], medium: 'GPU' },
    ])
    await until(async () => (await matched()) === 3)
    const skipped = (reason: string) =>
      metricTotal(stack, 'kinference_scorer_events_skipped_total', { pod: 'fake', reason })
    expect(await skipped('unknown_type')).toBe(1)
    expect(await skipped('not_an_event')).toBe(2)
    // A payload that is no batch at all is lost; the next one shows the gap, and without a
    // replay socket the pod's entries are dropped (cold), never left half-true.
    await publisher.payload(encode('junk'))
    await publisher.batch([{ type: 'BlockRemoved', block_hashes: [hashes[5]], medium: 'GPU' }])
    await until(async () => (await matched()) === 0)
    expect(stack.scorer.pools[0]?.ingestorCounters('fake')?.unrepairable).toBe(1)
    // Well-formed batches index again.
    await publisher.batch([storedEvent('array')])
    await until(async () => (await matched()) === blocks)
    expect((await fetch(`${stack.scorer.metricsUrl}/health`)).status).toBe(200)
  })

  it('ends a stream that breaks after its first bytes with an OpenAI-style error event', async () => {
    const pod = await brokenPod()
    const stack = await stacks.start({
      pods: 0,
      extraPods: [{ name: 'broken', http: pod.url, events: null, replay: null }],
    })
    const answer = await send(stack, '/v1/chat/completions', {
      model,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    })
    expect(answer.status).toBe(200)
    expect(decisionOf(answer.headers).pod).toBe('broken')
    expect(answer.text).toContain('"content":"one"')
    expect(answer.text).toMatch(/data: \{"error":\{"message":"the pod failed mid-stream/)
    expect(answer.text.trimEnd().endsWith('data: [DONE]')).toBe(true)
  })
})

describe('the scorer when a pod dies before its first byte', () => {
  it('retries the request on another pod: the client sees one whole answer', async () => {
    const dying = await headOnlyPod()
    const stack = await stacks.start({
      pods: 1,
      extraPods: [{ name: 'dying', http: dying.url, events: null, replay: null }],
    })
    // Until the router has tried the dying pod once (it is cold like the other one).
    for (let i = 0; i < 20 && dying.hits() === 0; i++) {
      const answer = await send(stack, '/v1/chat/completions', {
        model,
        messages: [{ role: 'user', content: `hi ${i}` }],
        max_tokens: 4,
        stream: true,
      })
      expect(answer.status).toBe(200)
      expect(decisionOf(answer.headers).pod).toBe('sim-pod-0')
      expect(answer.text).not.toContain('"error"')
      expect(answer.text.trimEnd().endsWith('data: [DONE]')).toBe(true)
    }
    expect(dying.hits()).toBeGreaterThan(0)
  })
})

describe('the scorer given bad input', () => {
  it('answers OpenAI-shaped errors with the right status and keeps serving', async () => {
    const stack = await stacks.start({ pods: 1, maxBodyBytes: 64 * 1024 })
    const url = `${stack.scorer.url}/v1/chat/completions`
    const user = [{ role: 'user', content: 'hello' }]
    const unsigned = await fetch(url, {
      method: 'POST',
      body: JSON.stringify({ model, messages: user }),
    })
    expect(unsigned.status).toBe(401)
    expect(((await unsigned.json()) as { error: { type: string } }).error.type).toBe(
      'authentication_error',
    )
    const forged = await fetch(url, {
      method: 'POST',
      headers: {
        'x-kinference-signature': 'v1=00',
        'x-kinference-timestamp': String(Math.floor(Date.now() / 1000)),
      },
      body: '{}',
    })
    expect(forged.status).toBe(401)
    const cases: [object | string, number, string][] = [
      ['{"model": ', 400, 'invalid_request'],
      [{ model: 'gpt-9', messages: user }, 404, 'model_not_found'],
      [{ model, messages: 'hello' }, 400, 'invalid_request'],
      [
        { model, messages: [{ role: 'user', content: 'word '.repeat(40_000) }] },
        413,
        'payload_too_large',
      ],
      [
        { model, messages: [{ role: 'user', content: 'word '.repeat(33_000) }] },
        400,
        'context_length_exceeded',
      ],
    ]
    const big = await stacks.start({ pods: 1 })
    for (const [body, status, code] of cases) {
      const target = code === 'context_length_exceeded' ? big : stack
      const answer = await send(target, '/v1/chat/completions', body)
      expect(answer.status, code).toBe(status)
      expect(JSON.parse(answer.text).error.code, code).toBe(code)
    }
    const admin = await fetch(`${stack.scorer.url}/admin/pods`)
    expect(admin.status).toBe(401)
    const wrongToken = await fetch(`${stack.scorer.url}/admin/pods`, {
      headers: { authorization: 'Bearer nope' },
    })
    expect(wrongToken.status).toBe(401)
    const ok = await fetch(`${stack.scorer.url}/admin/pods`, {
      headers: { authorization: `Bearer ${adminToken}` },
    })
    expect(ok.status).toBe(200)
    expect(
      (await send(stack, '/v1/chat/completions', { model, messages: user, max_tokens: 2 })).status,
    ).toBe(200)
  })
})

/** A pod standing in for vLLM, closed after the test: its base URL. */
async function podServing(handler: RequestListener): Promise<string> {
  return stacks.closing(await startLocalHttpServer(handler)).url
}

/**
 * A pod's HTTP side that only answers /metrics (empty): a pod that does not answer at all
 * is out of routing and its KV events are not indexed (see scorer-pod-outage.test.ts).
 */
function metricsOnlyPod(): Promise<string> {
  return podServing((req, res) => {
    req.resume()
    res.writeHead(req.url === '/metrics' ? 200 : 404).end()
  })
}

/** An upstream that sends a stream's head, then drops the connection before any byte of it. */
async function headOnlyPod(): Promise<{ url: string; hits: () => number }> {
  let hits = 0
  const url = await podServing((req, res) => {
    req.resume()
    if (req.url === '/metrics') {
      res.end('')
      return
    }
    hits++
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.flushHeaders()
    setTimeout(() => res.socket?.destroy(), 20)
  })
  return { url, hits: () => hits }
}

/** An upstream that sends two SSE chunks and then drops the connection. */
async function brokenPod(): Promise<{ url: string }> {
  const url = await podServing((req, res) => {
    req.resume()
    if (req.url === '/metrics') {
      res.end('')
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.write('data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n')
    res.write('data: {"choices":[{"index":0,"delta":{"content":"one"}}]}\n\n')
    setTimeout(() => res.socket?.destroy(), 20)
  })
  return { url }
}
