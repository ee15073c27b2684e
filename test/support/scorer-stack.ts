import type { z } from 'zod'
import { startSimulatedPools } from '../../control-plane/lab/embedded/start-simulated-pools.ts'
import { loadSimModelAssets } from '../../control-plane/lab/sim/sim-model-assets.ts'
import type { SimPod } from '../../control-plane/lab/sim/sim-pod.ts'
import { parsePrometheusText } from '../../control-plane/metrics/parse-prometheus-text.ts'
import type { EppConfigInput } from '../../control-plane/scorer/epp/epp-config.ts'
import type { podsReport } from '../../control-plane/scorer/http/admin-api.ts'
import { prepareRequest } from '../../control-plane/scorer/serving/prepare-request.ts'
import type { RunningScorer } from '../../control-plane/scorer/start-scorer.ts'
import type { StatusView } from '../../control-plane/status-page/status-view.ts'
import { type EdgeClaims, signEdgeRequest } from '../../shared/auth/edge-signature.ts'
import {
  InferencePoolSpec,
  type InferencePoolSpec as PoolSpec,
} from '../../shared/crd/inference-pool.ts'
import { type GpuProfile, l40s27bFp8 } from '../../shared/gpu/gpu-profile.ts'
import type { Plugins } from '../../shared/plugins.ts'

export const model = 'qwen3.8-27b-fp8'
export const secret = 'test-signing-secret-0123456789'
export const adminToken = 'test-admin-token-0123456789'
let assets: ReturnType<typeof loadSimModelAssets> | undefined

export interface Stack {
  pods: SimPod[]
  scorer: RunningScorer
  close(): Promise<void>
}

export function poolSpec(overrides: Partial<z.input<typeof InferencePoolSpec>> = {}): PoolSpec {
  return InferencePoolSpec.parse({
    selector: { matchLabels: {} },
    targetPort: 8000,
    models: [{ name: model, tokenizer: 'qwen3', maxContextTokens: 32_768 }],
    gpuProfile: 'l40s-27b-fp8',
    ...overrides,
  })
}

/** Simulated pods (time scale 50) behind a scorer with an in-memory index unless told otherwise. */
export async function startStack(
  options: {
    pods?: number
    spec?: PoolSpec
    redisUrl?: string | null
    redisPrefix?: string
    maxBodyBytes?: number
    /** Also accept requests without the edge's signature (kinfctl scorer --allow-unsigned). */
    allowUnsigned?: boolean
    eventsBind?: string
    extraPods?: { name: string; http: string; events: string | null; replay: string | null }[]
    /** The simulated pods' GPU profile (l40s-27b-fp8 unless told). */
    profile?: GpuProfile
    /** Engines per simulated pod (vLLM --data-parallel-size), and their LoRA adapters. */
    dataParallelSize?: number
    loraAdapters?: string[]
    /** Hears what the scorer and the pods log (printed with KINFERENCE_TEST_LOG anyway). */
    log?: (message: string) => void
    /** The scorer's strategies and conditions (a spec on a strategy of its own, say). */
    plugins?: Plugins
    /** The scorer as a gateway's Endpoint Picker (kinfctl scorer --epp-port). */
    epp?: EppConfigInput
  } = {},
): Promise<Stack> {
  assets ??= loadSimModelAssets()
  const { pods, scorer, close } = await startSimulatedPools({
    pools: [{ name: 'default', spec: options.spec ?? poolSpec() }],
    podsPerPool: options.pods ?? 3,
    sim: {
      profile: options.profile ?? l40s27bFp8,
      timeScale: 50,
      seed: 7,
      eventEncoding: 'map',
      assets,
      dataParallelSize: options.dataParallelSize,
      loraAdapters: options.loraAdapters,
    },
    scorer: {
      signingSecrets: [secret],
      adminToken,
      redisUrl: options.redisUrl ?? null,
      redisPrefix: options.redisPrefix ?? 'kinf:',
      extraPods: (options.extraPods ?? []).map((pod) => ({ ...pod, pool: 'default' })),
      maxBodyBytes: options.maxBodyBytes,
      allowUnsigned: options.allowUnsigned,
      eventsBind: options.eventsBind,
      plugins: options.plugins,
      epp: options.epp ?? null,
    },
    log: (message) => {
      options.log?.(message)
      if (process.env.KINFERENCE_TEST_LOG) console.log(message)
    },
  })
  return { pods, scorer, close }
}

const claimsDefault: EdgeClaims = { tenant: 'test', labels: [], backends: [], allowBurst: false }

/** A request as the edge sends it: signed. */
export async function send(
  stack: Stack,
  path: string,
  body: object | string,
  claims: Partial<EdgeClaims> = {},
  init: { signal?: AbortSignal; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetchSigned(stack, path, body, claims, init)
  return { status: response.status, headers: response.headers, text: await response.text() }
}

/** The same signed request, answered with the response itself: its body left to read. */
export async function fetchSigned(
  stack: Stack,
  path: string,
  body: object | string,
  claims: Partial<EdgeClaims> = {},
  init: { signal?: AbortSignal; headers?: Record<string, string> } = {},
): Promise<Response> {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  const signed = await signEdgeRequest(
    secret,
    { method: 'POST', path, body: text, nonce: crypto.randomUUID() },
    { ...claimsDefault, ...claims },
    Date.now() / 1000,
  )
  return fetch(`${stack.scorer.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...init.headers, ...signed },
    body: text,
    ...(init.signal ? { signal: init.signal } : {}),
  })
}

export function decisionOf(headers: Headers): Record<string, string> {
  return Object.fromEntries(
    (headers.get('x-kinference-decision') ?? '').split(';').map((part) => {
      const [key, value] = part.trim().split('=')
      return [key ?? '', value ?? '']
    }),
  )
}

export async function lookup(stack: Stack, body: object) {
  const response = await fetch(`${stack.scorer.url}/admin/lookup`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}` },
    body: JSON.stringify(body),
  })
  return (await response.json()) as {
    chosen: string
    /** The prompt's length as the scorer tokenized it. */
    promptTokens: number
    pods: { pod: string; matchedBlocks: number; matchedTokens: number; predictedTtftMs: number }[]
  }
}

/** The blocks of `body`'s prompt that POST /admin/lookup says `pod` holds (0 when none). */
export async function matchedBlocks(stack: Stack, body: object, pod: string): Promise<number> {
  const view = await lookup(stack, body)
  return view.pods.find((entry) => entry.pod === pod)?.matchedBlocks ?? 0
}

/** The leading blocks of a chat `body` the scorer's index holds for `pod`, asked directly. */
export async function indexedBlocks(stack: Stack, pod: string, body: object): Promise<number> {
  const prepared = prepareRequest('probe', 'chat', body, stack.scorer.pools)
  const [held] = await stack.scorer.index.lookup(prepared.request.keys, [pod], Date.now())
  return held ?? 0
}

/** GET /admin/pods as JSON: each pool's late binding and its pods' health, load and events. */
export async function adminPods(stack: Stack): Promise<Awaited<ReturnType<typeof podsReport>>> {
  const response = await fetch(`${stack.scorer.url}/admin/pods`, {
    headers: { authorization: `Bearer ${adminToken}` },
  })
  return (await response.json()) as Awaited<ReturnType<typeof podsReport>>
}

/** GET /ui/api/status as the status page reads it, with the admin token. */
export async function statusView(stack: Stack): Promise<StatusView> {
  const response = await fetch(`${stack.scorer.url}/ui/api/status`, {
    headers: { authorization: `Bearer ${adminToken}` },
  })
  return (await response.json()) as StatusView
}

/** The sum of a metric's samples whose labels include `labels`, from the scorer's /metrics. */
export async function metricTotal(
  stack: Stack,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await (await fetch(`${stack.scorer.metricsUrl}/metrics`)).text()
  return parsePrometheusText(text)
    .samples.filter(
      (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
    )
    .reduce((sum, s) => sum + s.value, 0)
}

export async function until(ready: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const deadline = performance.now() + ms
  while (!(await ready())) {
    if (performance.now() > deadline) throw new Error('condition not reached')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A chat body: a system prompt, a question and 4 tokens to answer, `fields` added or replacing. */
export const systemChat = (system: string, question: string, fields: object = {}) => ({
  model,
  messages: [
    { role: 'system', content: system },
    { role: 'user', content: question },
  ],
  max_tokens: 4,
  ...fields,
})

export const words = (seed: number, count: number) =>
  Array.from({ length: count }, (_, i) => `s${seed}w${i}`).join(' ')
