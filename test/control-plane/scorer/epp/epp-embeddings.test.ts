import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Tracer } from '@opentelemetry/api'
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import { afterEach, describe, expect, it } from 'vitest'
import { startSimulatedPools } from '../../../../control-plane/lab/embedded/start-simulated-pools.ts'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'
import { l40s27bFp8 } from '../../../../shared/gpu/gpu-profile.ts'
import type { LogFields } from '../../../../shared/logging/log.ts'
import { joinDecisions } from '../../../../shared/state/decision-entry.ts'
import {
  createExtProcClient,
  type EnvoyReplayResult,
  type EnvoyResponseReplay,
  type ExtProcClient,
  replayEnvoy,
} from '../../../support/ext-proc-client.ts'
import {
  adminToken,
  metricTotal,
  model,
  poolSpec,
  secret,
  words,
} from '../../../support/scorer-stack.ts'
import { useScorerStacks } from '../../../support/use-scorer-stacks.ts'

// POST /v1/embeddings behind a gateway: the Endpoint Picker prepares it as the scorer's own
// route does (the pool serving the model with task Embed), picks a pod of that pool on
// load, and meters the pod's answer as it goes back through the ext_proc stream. The scorer
// serves two pools: one generating (its pods on vLLM's generate runner, which has no
// /v1/embeddings), one embedding (its pods on the pooling runner).

const tlsDir = join(import.meta.dirname, '../../../fixtures/epp-tls')
const tls = { certFile: join(tlsDir, 'cert.pem'), keyFile: join(tlsDir, 'key.pem') }
const embedModel = 'qwen3-embedding-sim'
const stacks = useScorerStacks()
const clients: ExtProcClient[] = []
afterEach(() => {
  for (const client of clients.splice(0)) client.close()
})

/** Two generate pods serving `model` (pool gen), two pooling pods serving embedModel (pool embed). */
async function twoPoolStack(
  traced: { tracer: Tracer; log: (message: string, fields?: LogFields) => void } | null = null,
) {
  const stack = stacks.closing(
    await startSimulatedPools({
      pools: [
        { name: 'gen', spec: poolSpec() },
        {
          name: 'embed',
          spec: poolSpec({
            models: [
              { name: embedModel, tokenizer: 'qwen3', maxContextTokens: 8192, task: 'Embed' },
            ],
          }),
        },
      ],
      podsPerPool: 2,
      sim: {
        profile: l40s27bFp8,
        timeScale: 50,
        seed: 7,
        assets: loadSimModelAssets(),
        namePrefix: (pool) => pool,
      },
      scorer: {
        signingSecrets: [secret],
        adminToken,
        epp: { host: '127.0.0.1', port: 0, tls },
        ...(traced ? { tracer: traced.tracer } : {}),
      },
      log: traced?.log ?? (() => {}),
    }),
  )
  const client = createExtProcClient(`127.0.0.1:${stack.scorer.eppPort as number}`, {
    caPem: readFileSync(tls.certFile, 'utf8'),
  })
  clients.push(client)
  const embedPool = stack.scorer.pools.find((pool) => pool.name === 'embed')
  if (!embedPool) throw new Error('no pool embed')
  /** The embed pool's pod at a gateway address, or null when it is not one of them. */
  const embedPodAt = (address: string) =>
    embedPool.endpoints().find((pod) => new URL(pod.http).host === address)?.name ?? null
  const embedPods = (stack.fleets[1]?.pods ?? []).map((pod) => pod.config.podName)
  return { stack, client, embedPool, embedPodAt, embedPods }
}

const embeddingsHeaders = { ':path': '/v1/embeddings' }

/**
 * The gateway's part: the request, with the headers the picker set, to the primary endpoint
 * it answered; the pod's answer passed back in chunks of 64 KiB, as a proxy streams it.
 */
async function forwardToPrimary(routed: EnvoyReplayResult): Promise<EnvoyResponseReplay> {
  const endpoint = (routed.destination ?? '').split(',')[0] as string
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  for (const [name, value] of Object.entries(routed.setHeaders))
    if (!name.startsWith('x-gateway-') && name !== 'content-length') headers[name] = value
  const answer = await fetch(`http://${endpoint}/v1/embeddings`, {
    method: 'POST',
    headers,
    body: routed.streamedRequestBody,
  })
  const body = Buffer.from(await answer.arrayBuffer())
  const chunks: Buffer[] = []
  for (let at = 0; at < body.length; at += 65_536) chunks.push(body.subarray(at, at + 65_536))
  return { status: answer.status, served: endpoint, chunks }
}

function embedThroughGateway(client: ExtProcClient, body: object, requestId?: string) {
  return replayEnvoy(client, {
    requestHeaders: {
      ...embeddingsHeaders,
      ...(requestId === undefined ? {} : { 'x-request-id': requestId }),
    },
    body: JSON.stringify(body),
    response: forwardToPrimary,
  })
}

/** A request the picker is to refuse: no response to replay. */
function refusedThroughGateway(client: ExtProcClient, body: object | string) {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  return replayEnvoy(client, { requestHeaders: embeddingsHeaders, body: text })
}

function errorOf(result: EnvoyReplayResult) {
  return JSON.parse(result.immediate?.body ?? '{}').error as {
    type: string
    code: string | null
    param: string | null
  }
}

describe('the Endpoint Picker routing /v1/embeddings', () => {
  it('picks only pods of the pool serving the model with task Embed, and logs the decision with the pod’s prompt tokens', async () => {
    const { stack, client, embedPool, embedPodAt } = await twoPoolStack()
    for (let i = 0; i < 4; i++) {
      const result = await embedThroughGateway(client, {
        model: embedModel,
        input: [words(i, 30), 'a second input'],
      })
      expect(result.grpcError).toBeNull()
      expect(result.immediate).toBeNull()
      const endpoints = (result.destination ?? '').split(',')
      // Every endpoint, the fallbacks too, is a pooling pod: none a generate pod's.
      expect(endpoints.length).toBe(2)
      expect(endpoints.map(embedPodAt)).not.toContain(null)
      expect(result.setHeaders['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
      const answer = JSON.parse(result.echoedResponseBody.toString())
      expect(answer.data).toHaveLength(2)
    }
    const given = await embedThroughGateway(
      client,
      { model: embedModel, input: words(9, 40) },
      'r-9',
    )
    const usage = JSON.parse(given.echoedResponseBody.toString()).usage
    expect(usage.prompt_tokens).toBeGreaterThan(40)
    const primary = embedPodAt((given.destination ?? '').split(',')[0] as string)
    await stack.scorer.flushState()
    const decisions = joinDecisions(await stack.scorer.state.readDecisions({}))
    expect(decisions).toHaveLength(5)
    expect(decisions.every((d) => d.pool === embedPool.id && d.model === embedModel)).toBe(true)
    expect(decisions.find((d) => d.requestId === 'r-9')).toMatchObject({
      pod: primary,
      promptTokens: usage.prompt_tokens,
      matchedTokens: 0,
      end: { outcome: 'completed', status: 200, outputTokens: 0, ttftMs: null },
    })
    // The pod's usage.prompt_tokens reached the tokenization guard, and agreed.
    const labels = { pool: 'embed', kind: 'prompt' }
    expect(await metricTotal(stack, 'kinference_scorer_token_comparisons_total', labels)).toBe(5)
    expect(await metricTotal(stack, 'kinference_scorer_token_disagreements_total', labels)).toBe(0)
  })

  it('spreads concurrent picks over both pooling pods by their load', async () => {
    const { stack, client, embedPodAt, embedPods } = await twoPoolStack()
    const count = 4
    // Every request is picked before any goes to its pod: each pick sees the ones before it
    // counted on their pods, whatever the timing.
    let picked = 0
    let allPicked: () => void = () => {}
    const whenAllPicked = new Promise<void>((resolve) => {
      allPicked = resolve
    })
    const results = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        replayEnvoy(client, {
          requestHeaders: embeddingsHeaders,
          body: JSON.stringify({ model: embedModel, input: words(20 + i, 200) }),
          response: async (routed) => {
            picked += 1
            if (picked === count) allPicked()
            await whenAllPicked
            return forwardToPrimary(routed)
          },
        }),
      ),
    )
    const primaries = results.map((r) => embedPodAt((r.destination ?? '').split(',')[0] as string))
    expect(primaries.filter((pod) => pod === embedPods[0])).toHaveLength(count / 2)
    expect(primaries.filter((pod) => pod === embedPods[1])).toHaveLength(count / 2)
    await stack.scorer.flushState()
    const decisions = joinDecisions(await stack.scorer.state.readDecisions({}))
    expect(decisions.map((d) => d.pod).sort()).toEqual([...primaries].sort())
    expect(decisions.every((d) => d.end?.outcome === 'completed')).toBe(true)
  })

  it('reads the usage after vectors past 4 MiB from the answer’s tail', async () => {
    const { stack, client } = await twoPoolStack()
    // 300 inputs of 1,024 floats each: some 6 MiB of JSON before the usage.
    const input = Array.from({ length: 300 }, (_, i) => `input ${i}`)
    const result = await embedThroughGateway(client, { model: embedModel, input }, 'r-big')
    expect(result.echoedResponseBody.length).toBeGreaterThan(4 * 1024 * 1024)
    const usage = JSON.parse(result.echoedResponseBody.toString()).usage
    const labels = { pool: 'embed', kind: 'prompt' }
    expect(await metricTotal(stack, 'kinference_scorer_token_comparisons_total', labels)).toBe(1)
    expect(await metricTotal(stack, 'kinference_scorer_token_disagreements_total', labels)).toBe(0)
    await stack.scorer.flushState()
    const [decision] = joinDecisions(await stack.scorer.state.readDecisions({}))
    expect(decision).toMatchObject({
      requestId: 'r-big',
      promptTokens: usage.prompt_tokens,
      end: { outcome: 'completed', status: 200, outputTokens: 0 },
    })
  })

  it('traces the pick with its model, pool and count, hands the pod its traceparent, and writes its access line', async () => {
    const exporter = new InMemorySpanExporter()
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
    stacks.defer(() => provider.shutdown())
    const lines: LogFields[] = []
    const { client, embedPool, embedPodAt } = await twoPoolStack({
      tracer: provider.getTracer('test'),
      log: (_message, fields = {}) => lines.push(fields),
    })
    const input = words(11, 50)
    const result = await embedThroughGateway(client, { model: embedModel, input }, 'r-traced')
    const usage = JSON.parse(result.echoedResponseBody.toString()).usage
    const pod = embedPodAt((result.destination ?? '').split(',')[0] as string)
    const pick = exporter.getFinishedSpans().find((span) => span.name === 'kinference.route')
    expect(pick?.attributes).toMatchObject({
      'kinference.endpoint_picker': true,
      'url.path': '/v1/embeddings',
      'gen_ai.request.model': embedModel,
      'kinference.pool': embedPool.id,
      'kinference.pod': pod,
      'kinference.prompt_tokens': usage.prompt_tokens,
      'kinference.outcome': 'picked',
    })
    const { traceId, spanId } = pick?.spanContext() ?? { traceId: '', spanId: '' }
    expect(result.setHeaders.traceparent).toBe(`00-${traceId}-${spanId}-01`)
    const access = lines.find((fields) => fields.kind === 'access' && fields.endpoint_picker)
    expect(access).toMatchObject({
      path: '/v1/embeddings',
      status: 200,
      request_id: 'r-traced',
      model: embedModel,
      pod,
      prompt_tokens: usage.prompt_tokens,
    })
  })

  it('refuses a generation model 400 model_not_supported, an unknown one 404, a malformed body 400', async () => {
    const { stack, client } = await twoPoolStack()
    const generation = await refusedThroughGateway(client, { model, input: 'hello' })
    expect(generation.immediate?.status).toBe(400)
    expect(errorOf(generation)).toMatchObject({
      type: 'invalid_request_error',
      code: 'model_not_supported',
      param: 'model',
    })
    expect(generation.destination).toBeNull()
    const unknown = await refusedThroughGateway(client, { model: 'no-such-model', input: 'x' })
    expect(unknown.immediate?.status).toBe(404)
    expect(errorOf(unknown)).toMatchObject({ code: 'model_not_found', param: 'model' })
    const empty = await refusedThroughGateway(client, { model: embedModel, input: [] })
    expect(empty.immediate?.status).toBe(400)
    expect(errorOf(empty)).toMatchObject({ type: 'invalid_request_error', param: 'input' })
    const broken = await refusedThroughGateway(client, '{"model": ')
    expect(broken.immediate?.status).toBe(400)
    expect(errorOf(broken).type).toBe('invalid_request_error')
    await stack.scorer.flushState()
    expect(await stack.scorer.state.readDecisions({})).toEqual([])
  })
})
