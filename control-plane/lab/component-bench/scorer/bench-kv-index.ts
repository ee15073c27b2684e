import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import { computeBlockKeys } from '../../../../shared/kv-index/block-keys.ts'
import type { IndexEvent, KvIndex } from '../../../../shared/kv-index/kv-index.ts'
import { createMemoryKvIndex } from '../../../../shared/kv-index/memory-kv-index.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import { createRedisKvIndex } from '../../../kv-index/redis-kv-index.ts'

/**
 * npm run bench:index — the KV index's performance figures, memory and Redis:
 * 1. apply: stored blocks per second over 32 pods' event batches shaped like vLLM's (events
 *    of 1–48 blocks of 16 tokens continuing each pod's sequences over 4,096 distinct
 *    prompts, and BlockRemoved of the oldest blocks once a pod holds 8,192);
 * 2. lookup: a 512-block chain over 32 pods (16 hold all of it, 16 a random prefix), in an
 *    index already holding the apply run's blocks, so the table has a realistic size.
 * Redis applies are issued for all pods at once (each pod's batches in order), as a scorer
 * ingesting every pod's stream does; lookups one at a time.
 */
const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    blocks: { type: 'string', default: '2000000' },
    'redis-blocks': { type: 'string', default: '800000' },
    'redis-url': { type: 'string', default: 'redis://127.0.0.1:6379' },
    lookups: { type: 'string', default: '5000' },
  },
})
const seed = Number(values.seed)
const blockSize = 16
const podCount = 32
const capacity = 8_192
const promptBlocks = 64
const prompts = 4_096
const model = 'bench-model'
const pods = Array.from({ length: podCount }, (_, i) => `pod-${i}`)

const random = createSeededRandom(seed)
const int = (n: number) => Math.floor(random() * n)
const tokens = new Uint32Array(prompts * promptBlocks * blockSize)
for (let i = 0; i < tokens.length; i++) tokens[i] = int(151_000)

/** Each pod's batches, in order; the sequences it extends live in `chains`. */
function generateBatches(blocksPerPod: number): IndexEvent[][][] {
  return pods.map((_, podIndex) => {
    const chains = new Map<number, bigint[]>()
    const held: bigint[] = []
    let heldFrom = 0
    let nextHash = BigInt(podIndex + 1) << 40n
    let stored = 0
    const batches: IndexEvent[][] = []
    while (stored < blocksPerPod) {
      const batch: IndexEvent[] = []
      for (let events = 1 + int(3); events > 0; events--) {
        const prompt = int(prompts)
        let chain = chains.get(prompt) ?? []
        if (chain.length === promptBlocks) chain = []
        const from = chain.length
        const to = Math.min(promptBlocks, from + 1 + int(48))
        const hashes = Array.from({ length: to - from }, () => nextHash++)
        const start = (prompt * promptBlocks + from) * blockSize
        batch.push({
          type: 'stored',
          engineHashes: hashes,
          parentEngineHash: from === 0 ? null : (chain[from - 1] as bigint),
          tokenIds: tokens.subarray(start, start + (to - from) * blockSize),
          blockSize,
          loraName: null,
          cacheSalt: null,
        })
        chains.set(prompt, [...chain, ...hashes])
        held.push(...hashes)
        stored += hashes.length
      }
      if (held.length - heldFrom > capacity) {
        const evicted = held.slice(heldFrom, held.length - capacity)
        heldFrom = held.length - capacity
        batch.push({ type: 'removed', engineHashes: evicted })
      }
      batches.push(batch)
    }
    return batches
  })
}

/** Applies every pod's batches, pods concurrently, each pod's in order. */
async function applyAll(index: KvIndex, batches: IndexEvent[][][]): Promise<number> {
  const stored = await Promise.all(
    batches.map(async (podBatches, i) => {
      let count = 0
      for (const batch of podBatches) {
        count += (await index.apply(pods[i] as string, model, batch)).stored
      }
      return count
    }),
  )
  return stored.reduce((a, b) => a + b, 0)
}

interface ApplyRun {
  stored: number
  sent: number
  removals: number
  seconds: number
  rate: number
  perBatch: number
}

async function timeApply(index: KvIndex, batches: IndexEvent[][][]): Promise<ApplyRun> {
  const events = batches.flat(2)
  const count = (type: IndexEvent['type']) =>
    events.reduce(
      (n, e) => n + (e.type === type && e.type !== 'cleared' ? e.engineHashes.length : 0),
      0,
    )
  const started = performance.now()
  const stored = await applyAll(index, batches)
  const seconds = (performance.now() - started) / 1000
  const batchCount = batches.reduce((n, b) => n + b.length, 0)
  const sent = count('stored')
  return {
    stored,
    sent,
    removals: count('removed'),
    seconds,
    rate: stored / seconds,
    perBatch: sent / batchCount,
  }
}

/**
 * Two phases over the same streams: filling (each pod's batches before its first
 * BlockRemoved) and steady state (the rest: every block stored evicts an old one).
 */
async function measureApply(index: KvIndex, blocks: number): Promise<[ApplyRun, ApplyRun]> {
  const batches = generateBatches(Math.ceil(blocks / podCount))
  const firstEviction = batches.map((podBatches) => {
    const at = podBatches.findIndex((batch) => batch.some((event) => event.type === 'removed'))
    return at === -1 ? podBatches.length : at
  })
  const fill = await timeApply(
    index,
    batches.map((podBatches, i) => podBatches.slice(0, firstEviction[i])),
  )
  const steady = await timeApply(
    index,
    batches.map((podBatches, i) => podBatches.slice(firstEviction[i])),
  )
  return [fill, steady]
}

function describeApply(name: string, [fill, steady]: [ApplyRun, ApplyRun]): string {
  const phase = (run: ApplyRun) =>
    `${format(run.rate)} stored blocks/s (${format(run.stored)} of ${format(run.sent)} blocks sent, ${format(run.removals)} removals, ${run.seconds.toFixed(2)} s)`
  return [
    `${name} apply, filling: ${phase(fill)}`,
    `${name} apply, steady state: ${phase(steady)}; ~${steady.perBatch.toFixed(0)} blocks per batch, 32 pods`,
  ].join('\n')
}

/** Stores a 512-block chain on every pod (all of it on even pods), then times lookups. */
async function measureLookup(index: KvIndex, lookups: number) {
  const long = new Uint32Array(512 * blockSize)
  for (let i = 0; i < long.length; i++) long[i] = int(151_000)
  const chain = computeBlockKeys(long, blockSize, { model })
  for (const [i, pod] of pods.entries()) {
    const blocks = i % 2 === 0 ? 512 : 1 + int(511)
    const base = BigInt(i + 1) << 48n
    const hashes = Array.from({ length: blocks }, (_, b) => base + BigInt(b))
    await index.apply(pod, model, [
      {
        type: 'stored',
        engineHashes: hashes,
        parentEngineHash: null,
        tokenIds: long.subarray(0, blocks * blockSize),
        blockSize,
        loraName: null,
        cacheSalt: null,
      },
    ])
  }
  const check = await index.lookup(chain, pods, 0)
  if (check.filter((depth) => depth === 512).length < podCount / 2) {
    throw new Error(`lookup found ${check.join(',')}: the index lost blocks`)
  }
  for (let i = 0; i < Math.min(200, lookups); i++) await index.lookup(chain, pods, 0)
  const times: number[] = []
  for (let i = 0; i < lookups; i++) {
    const started = performance.now()
    await index.lookup(chain, pods, 0)
    times.push((performance.now() - started) * 1000)
  }
  times.sort((a, b) => a - b)
  const at = (q: number) =>
    times[Math.min(times.length - 1, Math.floor(q * times.length))] as number
  return { median: at(0.5), p99: at(0.99) }
}

const format = (n: number) => Math.round(n).toLocaleString('en-US')
const micros = (n: number) => (n < 100 ? n.toFixed(1) : format(n))

const memory = createMemoryKvIndex()
process.stdout.write(
  `${describeApply('memory', await measureApply(memory, Number(values.blocks)))}\n`,
)
const memoryLookup = await measureLookup(memory, Number(values.lookups))
process.stdout.write(
  `memory lookup, 512 blocks x 32 pods: median ${micros(memoryLookup.median)} µs, p99 ${micros(memoryLookup.p99)} µs\n`,
)
await memory.close()

const prefix = `kinf-bench:${randomUUID()}:`
let redis: KvIndex
try {
  redis = await createRedisKvIndex({ redis: values['redis-url'], prefix })
} catch (error) {
  process.stderr.write(`redis: skipped, ${error instanceof Error ? error.message : error}\n`)
  process.exit(1)
}
try {
  process.stdout.write(
    `${describeApply('redis', await measureApply(redis, Number(values['redis-blocks'])))}\n`,
  )
  const redisLookup = await measureLookup(redis, Math.min(500, Number(values.lookups)))
  process.stdout.write(
    `redis lookup, 512 blocks x 32 pods: median ${micros(redisLookup.median)} µs, p99 ${micros(redisLookup.p99)} µs\n`,
  )
  const started = performance.now()
  await redis.dropPod('pod-0')
  process.stdout.write(
    `redis dropPod of a pod holding ~${format(capacity + 512)} blocks: ${(performance.now() - started).toFixed(1)} ms\n`,
  )
} finally {
  for (const pod of pods) await redis.dropPod(pod)
  await redis.close()
}
