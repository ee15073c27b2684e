import { createKvEventSubscriber } from '../../control-plane/kv-events/create-kv-event-subscriber.ts'
import type { EventBatch } from '../../control-plane/kv-events/kv-cache-event.ts'
import { loadSimModelAssets } from '../../control-plane/lab/sim/sim-model-assets.ts'
import { createSimPod, type SimPod } from '../../control-plane/lab/sim/sim-pod.ts'
import type { SimPodConfigInput } from '../../control-plane/lab/sim/sim-pod-config.ts'
import { l40s27bFp8 } from '../../shared/gpu/gpu-profile.ts'

export const model = 'qwen3.8-27b-fp8'

/**
 * Pods and other resources of one test file, closed after each test: call in the file,
 * use `pod()` and `cleanups.push()` in tests.
 */
export function usePods(afterEach: (fn: () => Promise<void>) => void) {
  const cleanups: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })
  return {
    cleanups,
    async pod(overrides: Partial<SimPodConfigInput> = {}): Promise<SimPod> {
      const started = await startPod(overrides)
      cleanups.push(() => started.close())
      return started
    },
  }
}

/** A pod on free ports, fast (time scale 50), with the reference profile unless told otherwise. */
export async function startPod(overrides: Partial<SimPodConfigInput> = {}): Promise<SimPod> {
  // The pod serves the tokenizer it is configured with; assets are shared per source.
  const assets = loadSimModelAssets(overrides.tokenizer ?? 'qwen3')
  return createSimPod(
    {
      podName: 'test-pod',
      modelName: model,
      profile: l40s27bFp8,
      httpPort: 0,
      zmqPort: 0,
      replayPort: 0,
      timeScale: 50,
      // As Kinference deploys vLLM, so tests read each answer's cached tokens.
      enablePromptTokensDetails: true,
      ...overrides,
    },
    assets,
  )
}

/** The reference profile with room for only `blocks` KV-cache blocks (and max_model_len to match). */
export function smallCache(blocks: number) {
  return {
    ...l40s27bFp8,
    model: { ...l40s27bFp8.model, maxModelLen: blocks * 16 },
    kvCacheBytes: (blocks + 1) * 16 * 131_072,
  }
}

export interface ChatAnswer {
  status: number
  headers: Headers
  body: {
    choices: { message: { content: string }; finish_reason: string }[]
    usage: {
      prompt_tokens: number
      completion_tokens: number
      prompt_tokens_details?: { cached_tokens: number }
    }
    error?: { message: string; code: number }
  }
}

export async function chat(pod: SimPod, body: object): Promise<ChatAnswer> {
  const response = await fetch(`${pod.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, ...body }),
  })
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as ChatAnswer['body'],
  }
}

/** vLLM's POST /tokenize on `pod` for a request (a body, or its JSON text as sent). */
export async function tokenizeOn(
  pod: SimPod,
  request: object | string,
): Promise<{ status: number; count: number; tokens: number[] }> {
  const response = await fetch(`${pod.url}/tokenize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof request === 'string' ? request : JSON.stringify(request),
  })
  const { count, tokens } = (await response.json()) as { count: number; tokens: number[] }
  return { status: response.status, count, tokens }
}

/** Words that make prompts of a known size: every distinct seed gives different text. */
export function text(seed: number, words: number): string {
  return Array.from({ length: words }, (_, i) => `w${seed}x${i}`).join(' ')
}

export const cached = (answer: ChatAnswer) =>
  answer.body.usage.prompt_tokens_details?.cached_tokens ?? 0
export const modelledTtft = (answer: ChatAnswer) =>
  Number(answer.headers.get('x-kinference-sim-ttft-ms'))

/** Polls an in-process condition (engine state) without sleeping blindly for long. */
export async function until(ready: () => boolean, ms = 20_000): Promise<void> {
  const deadline = performance.now() + ms
  while (!ready()) {
    if (performance.now() > deadline) throw new Error('condition not reached')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/**
 * Subscribes to a pod's KV events and waits until the subscription is live (ZMQ's slow
 * joiner): a prefix-cache reset on an idle pod publishes a batch, which is the probe.
 */
export async function subscribe(pod: SimPod) {
  const batches: { seq: bigint; batch: EventBatch }[] = []
  const subscriber = createKvEventSubscriber({
    endpoint: pod.kvEventsEndpoint,
    topicPrefix: pod.topic,
    onBatch: (_topic, seq, batch) => batches.push({ seq, batch }),
    onError: (error) => {
      throw error
    },
  })
  // Each probe is awaited, so no reset is still in flight once the first one arrived.
  for (let probe = 0; batches.length === 0 && probe < 500; probe++) {
    await fetch(`${pod.url}/reset_prefix_cache`, { method: 'POST' })
    await until(() => batches.length > 0, 20).catch(() => {})
  }
  await new Promise((resolve) => setTimeout(resolve, 50))
  batches.length = 0
  const hashes = (type: 'BlockStored' | 'BlockRemoved') =>
    batches.flatMap(({ batch }) =>
      batch.events.flatMap((e) => (e.type === type ? e.blockHashes : [])),
    )
  return {
    batches,
    stored: () => hashes('BlockStored'),
    removed: () => hashes('BlockRemoved'),
    close: () => subscriber.close(),
  }
}
