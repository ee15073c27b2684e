import type { BlockKeyChain } from '../../../shared/kv-index/block-keys.ts'
import type { IndexEvent, PodId } from '../../../shared/kv-index/kv-index.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import { blockSize, chainOf, promptTokens } from './kv-index-fixtures.ts'

/** One call on a KvIndex, as the model-based test replays it on the index and the reference. */
export type WorkloadStep =
  | { kind: 'apply'; pod: PodId; model: string; events: IndexEvent[] }
  | { kind: 'lookup'; chain: BlockKeyChain; pods: PodId[]; nowMs: number }
  | { kind: 'speculate'; pod: PodId; chain: BlockKeyChain; blocks: number; expiresAtMs: number }
  | { kind: 'drop'; pod: PodId }

interface Prompt {
  tokens: number[]
  model: string
  loraName: string | null
  cacheSalt: string | null
}

function seedOf(prompt: Prompt): { loraName: string | null; cacheSalt: string | null } {
  return { loraName: prompt.loraName, cacheSalt: prompt.cacheSalt }
}

const mask64 = (1n << 64n) - 1n

/** FNV-1a over the chain's inputs, as vLLM chains sha256: same inputs, same hash. */
function engineHash(parent: bigint, values: Iterable<number>): bigint {
  let hash = parent ^ 0xcbf29ce484222325n
  for (const value of values) hash = ((hash ^ BigInt(value)) * 0x100000001b3n) & mask64
  return hash
}

function textCodes(text: string | null): number[] {
  return text === null ? [] : [...text].map((char) => char.charCodeAt(0) + 1_000_000)
}

/**
 * A seeded stream of index calls from pods behaving like vLLM: prompts sharing system
 * prefixes (some with a LoRA, a cache_salt, another model), BlockStored events continuing a
 * pod's chains (and sometimes starting mid-prompt on an unknown parent), duplicate stores,
 * BlockRemoved of held and of unknown hashes, AllBlocksCleared, restarts (dropPod and new
 * engine hashes), speculative entries, time passing, and lookups of every prompt.
 */
export function* randomKvWorkload(seed: number, steps: number): Generator<WorkloadStep> {
  const random = createSeededRandom(seed)
  const int = (n: number) => Math.floor(random() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T
  const prefixes = [3, 5, 6].map((blocks, i) => promptTokens(blocks, 100 + i))
  const prompts: Prompt[] = Array.from({ length: 14 }, (_, i) => ({
    tokens: [...pick(prefixes), ...promptTokens(2 + int(7), 1000 + i)],
    model: i % 7 === 6 ? 'model-b' : 'model-a',
    loraName: i % 5 === 4 ? 'lora-1' : null,
    cacheSalt: i % 6 === 5 ? 'salt-1' : null,
  }))
  const pods = ['pod-0', 'pod-1', 'pod-2', 'pod-3', 'pod-4']
  const incarnation = new Map(pods.map((pod, i) => [pod, BigInt(i + 1) << 40n]))
  const held = new Map<PodId, bigint[]>(pods.map((pod) => [pod, []]))
  const reached = new Map<string, number>()
  let nowMs = 1_000

  const hashOf = (pod: PodId, prompt: Prompt, block: number): bigint => {
    let hash = incarnation.get(pod) as bigint
    const extra = [...textCodes(prompt.model), ...textCodes(prompt.loraName)]
    for (let b = 0; b <= block; b++) {
      const tokens = prompt.tokens.slice(b * blockSize, (b + 1) * blockSize)
      const salt = b === 0 ? textCodes(prompt.cacheSalt) : []
      hash = engineHash(hash, [...tokens, ...extra, ...salt])
    }
    return hash
  }

  const storedEvent = (pod: PodId, index: number): IndexEvent => {
    const prompt = prompts[index] as Prompt
    const blocks = prompt.tokens.length / blockSize
    const progress = reached.get(`${pod}/${index}`) ?? 0
    const roll = random()
    const from = roll < 0.6 ? Math.min(progress, blocks - 1) : roll < 0.8 ? 0 : int(blocks)
    const to = Math.min(blocks, from + 1 + int(5))
    const hashes = Array.from({ length: to - from }, (_, i) => hashOf(pod, prompt, from + i))
    held.get(pod)?.push(...hashes)
    reached.set(`${pod}/${index}`, Math.max(progress, to))
    return {
      type: 'stored',
      engineHashes: hashes,
      parentEngineHash: from === 0 ? null : hashOf(pod, prompt, from - 1),
      tokenIds: prompt.tokens.slice(from * blockSize, to * blockSize),
      blockSize,
      loraName: prompt.loraName,
      cacheSalt: prompt.cacheSalt,
    }
  }

  const forget = (pod: PodId) => {
    held.set(pod, [])
    for (const key of reached.keys()) if (key.startsWith(`${pod}/`)) reached.delete(key)
  }

  for (let step = 0; step < steps; step++) {
    const pod = pick(pods)
    const roll = random()
    if (roll < 0.45) {
      // One batch of a pod: same-model events only, as one vLLM engine sends.
      const model = random() < 0.85 ? 'model-a' : 'model-b'
      const candidates = prompts.flatMap((prompt, i) => (prompt.model === model ? [i] : []))
      const events: IndexEvent[] = []
      for (let n = 1 + int(3); n > 0; n--) {
        const kind = random()
        const list = held.get(pod) as bigint[]
        if (kind < 0.6) {
          const event = storedEvent(pod, pick(candidates))
          events.push(event)
          if (random() < 0.1) events.push(event) // identical blocks stored twice
        } else if (kind < 0.95 && list.length > 0) {
          const at = int(list.length)
          const hash = list[at] as bigint
          list.splice(at, 1)
          events.push({ type: 'removed', engineHashes: random() < 0.1 ? [hash, 12345n] : [hash] })
        } else if (kind < 0.965) {
          events.push({ type: 'cleared' })
          forget(pod)
        } else if (kind < 0.98 && list.length > 0) {
          // Garbage: a held hash announced again for another block (vLLM never does this).
          const prompt = pick(prompts.filter((p) => p.model === model))
          events.push({
            type: 'stored',
            engineHashes: [pick(list)],
            parentEngineHash: null,
            tokenIds: prompt.tokens.slice(0, blockSize),
            blockSize,
            loraName: prompt.loraName,
            cacheSalt: prompt.cacheSalt,
          })
        } else {
          events.push({ type: 'removed', engineHashes: [BigInt(int(1e9))] })
        }
      }
      yield { kind: 'apply', pod, model, events }
    } else if (roll < 0.47) {
      forget(pod)
      incarnation.set(pod, (incarnation.get(pod) as bigint) + 1n)
      yield { kind: 'drop', pod }
    } else if (roll < 0.57) {
      const prompt = pick(prompts)
      yield {
        kind: 'speculate',
        pod,
        chain: chainOf(prompt.tokens, prompt.model, seedOf(prompt)),
        blocks: int(prompt.tokens.length / blockSize + 1),
        expiresAtMs: nowMs + 1 + int(60),
      }
    } else if (roll < 0.67) {
      nowMs += int(25)
    } else {
      const prompt = pick(prompts)
      const seed = seedOf(prompt)
      if (random() < 0.1) seed.cacheSalt = 'other-salt'
      const chain = chainOf(prompt.tokens, prompt.model, seed)
      yield {
        kind: 'lookup',
        chain: random() < 0.3 ? chain.subarray(0, 2 * int(chain.length / 2)) : chain,
        pods: [...pods, 'never-seen'],
        nowMs,
      }
    }
  }
}
