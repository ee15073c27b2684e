import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { InferencePoolSpec as PoolSpec } from '../../../../shared/crd/inference-pool.ts'
import {
  createExtProcClient,
  type EnvoyReplayResult,
  type EnvoyResponseReplay,
  type ExtProcClient,
  replayEnvoy,
} from '../../../support/ext-proc-client.ts'
import {
  adminPods,
  decisionOf,
  lookup,
  matchedBlocks,
  metricTotal,
  model,
  poolSpec,
  type Stack,
  send,
  systemChat,
  until,
  words,
} from '../../../support/scorer-stack.ts'
import { useScorerStacks } from '../../../support/use-scorer-stacks.ts'

// The scorer as a Gateway API gateway's Endpoint Picker, driven as Envoy drives it: the
// replaying client sends the request's headers and body, takes the endpoint the scorer
// answers, then (as the gateway) sends the request to that simulated vLLM pod and streams
// the pod's real answer back through the ext_proc stream, with the endpoint it served.

const tlsDir = join(import.meta.dirname, '../../../fixtures/epp-tls')
const tls = {
  certFile: join(tlsDir, 'cert.pem'),
  keyFile: join(tlsDir, 'key.pem'),
}
const stacks = useScorerStacks()
const clients: ExtProcClient[] = []
afterEach(() => {
  for (const client of clients.splice(0)) client.close()
})

async function startEppStack(spec?: PoolSpec): Promise<{ stack: Stack; client: ExtProcClient }> {
  const stack = await stacks.start({
    epp: { host: '127.0.0.1', port: 0, tls },
    ...(spec ? { spec } : {}),
  })
  const port = stack.scorer.eppPort as number
  const client = createExtProcClient(`127.0.0.1:${port}`, {
    caPem: readFileSync(tls.certFile, 'utf8'),
  })
  clients.push(client)
  return { stack, client }
}

/** The address a gateway reaches `pod` at, as the scorer's pool knows it. */
function addressOf(stack: Stack, pod: string): string {
  const endpoint = stack.scorer.pools[0]?.endpoint(pod)
  if (!endpoint) throw new Error(`no pod ${pod}`)
  return new URL(endpoint.http).host
}

function podAt(stack: Stack, address: string): string {
  const pod = stack.scorer.pools[0]?.endpoints().find((e) => new URL(e.http).host === address)
  if (!pod) throw new Error(`no pod at ${address}`)
  return pod.name
}

/**
 * What the gateway does with the routing answer: the request, with the headers the picker
 * set, to the endpoint at `index` of its list; the pod's answer as the response to replay.
 */
function forwardTo(index: number) {
  return async (routed: EnvoyReplayResult): Promise<EnvoyResponseReplay> => {
    const endpoint = (routed.destination ?? '').split(',')[index] as string
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    for (const [name, value] of Object.entries(routed.setHeaders))
      if (!name.startsWith('x-gateway-') && name !== 'content-length') headers[name] = value
    const answer = await fetch(`http://${endpoint}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: routed.streamedRequestBody,
    })
    const text = await answer.text()
    // A stream as a proxy passes it on, event by event (the pod's writes may arrive
    // together on loopback); a JSON answer whole.
    const chunks = text.includes('\n\n')
      ? text.split(/(?<=\n\n)/).filter((event) => event !== '')
      : [text]
    return { status: answer.status, served: endpoint, chunks }
  }
}

const chat = (system: string, question: string, extra: object = {}) =>
  systemChat(system, question, { ignore_eos: true, max_tokens: 8, ...extra })

/** Warms one pod with a long system prompt through the scorer's own path; its name. */
async function warmPod(stack: Stack, system: string): Promise<string> {
  const first = await send(stack, '/v1/chat/completions', chat(system, 'warm up'))
  expect(first.status).toBe(200)
  const warm = decisionOf(first.headers).pod as string
  const { messages } = chat(system, 'next')
  await until(async () => (await matchedBlocks(stack, { model, messages }, warm)) > 10)
  return warm
}

describe('the scorer as an Endpoint Picker', () => {
  it('picks the scorer’s own choice for a streamed request, and accounts the answer on the pod that served it', async () => {
    const { stack, client } = await startEppStack()
    const system = words(3, 600)
    const warm = await warmPod(stack, system)
    const body = chat(system, 'a streamed question', {
      stream: true,
      stream_options: { include_usage: true },
    })
    const choice = await lookup(stack, { model, messages: body.messages })
    expect(choice.chosen).toBe(warm)
    const before = await metricTotal(stack, 'kinference_scorer_requests_total', {
      pod: warm,
      outcome: 'completed',
    })
    const ttftBefore = await metricTotal(stack, 'kinference_scorer_ttft_seconds_count', {
      pod: warm,
    })

    const result = await replayEnvoy(client, {
      body: JSON.stringify(body),
      chunkSize: 1_000,
      trailers: { 'x-envoy-trailer': '1' },
      response: forwardTo(0),
    })

    expect(result.grpcError).toBeNull()
    expect(result.immediate).toBeNull()
    const endpoints = (result.destination ?? '').split(',')
    expect(endpoints[0]).toBe(addressOf(stack, warm))
    expect(endpoints.length).toBe(3)
    expect(result.metadataDestination).toBe(result.destination)
    expect(result.streamedRequestBody.toString()).toBe(JSON.stringify(body))
    const echoed = result.echoedResponseBody.toString()
    expect(echoed).toContain('data: [DONE]')
    expect(echoed).toContain('"cached_tokens"')
    await until(
      async () =>
        (await metricTotal(stack, 'kinference_scorer_requests_total', {
          pod: warm,
          outcome: 'completed',
        })) ===
        before + 1,
    )
    expect(await metricTotal(stack, 'kinference_scorer_ttft_seconds_count', { pod: warm })).toBe(
      ttftBefore + 1,
    )
  })

  it('moves a non-streamed request’s accounting to the fallback the gateway served it on', async () => {
    const { stack, client } = await startEppStack()
    const body = chat(words(4, 300), 'a non-streamed question')
    let fallback = ''
    const result = await replayEnvoy(client, {
      body: JSON.stringify(body),
      response: async (routed) => {
        const response = await forwardTo(1)(routed)
        fallback = podAt(stack, response.served as string)
        return response
      },
    })
    expect(result.grpcError).toBeNull()
    const primary = podAt(stack, (result.destination ?? '').split(',')[0] as string)
    expect(fallback).not.toBe(primary)
    expect(JSON.parse(result.echoedResponseBody.toString()).usage.prompt_tokens).toBeGreaterThan(
      300,
    )
    await until(
      async () =>
        (await metricTotal(stack, 'kinference_scorer_requests_total', {
          pod: fallback,
          outcome: 'completed',
        })) === 1,
    )
    expect(
      await metricTotal(stack, 'kinference_scorer_requests_total', {
        pod: primary,
        outcome: 'completed',
      }),
    ).toBe(0)
  })

  it('answers errors as ImmediateResponses: 404 unknown model, 400 bad JSON, 503 no endpoint in the subset, 429 an objective no pod meets', async () => {
    const { stack, client } = await startEppStack()
    const unknown = await replayEnvoy(client, {
      body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(unknown.immediate?.status).toBe(404)
    expect(JSON.parse(unknown.immediate?.body ?? '{}').error.code).toBe('model_not_found')

    const broken = await replayEnvoy(client, { body: '{"model": ' })
    expect(broken.immediate?.status).toBe(400)
    expect(JSON.parse(broken.immediate?.body ?? '{}').error.type).toBe('invalid_request_error')

    const outside = await replayEnvoy(client, {
      body: JSON.stringify(chat('system', 'hello')),
      subset: ['10.255.255.1:8000'],
    })
    expect(outside.immediate?.status).toBe(503)

    const hurried = await replayEnvoy(client, {
      requestHeaders: { 'x-llm-d-slo-ttft-ms': '1' },
      body: JSON.stringify(chat(words(5, 2_000), 'now')),
    })
    expect(hurried.immediate?.status).toBe(429)
    expect(hurried.immediate?.headers['retry-after']).toBeDefined()
    expect(JSON.parse(hurried.immediate?.body ?? '{}').error.code).toBe('slo_unattainable')
    // Nothing refused was dispatched: every pod is idle again.
    const { pods } = await lookup(stack, { model, messages: chat('x', 'y').messages })
    expect(pods.length).toBe(3)
  })

  it('routes only within the subset hint, and counts a request the client abandons as gone', async () => {
    const { stack, client } = await startEppStack()
    const pods = stack.scorer.pools[0]?.endpoints() ?? []
    const only = pods[2]?.name as string
    const body = chat(words(6, 200), 'within the subset', { stream: true })
    const result = await replayEnvoy(client, {
      body: JSON.stringify(body),
      subset: addressOf(stack, only),
      response: async (routed) => ({ ...(await forwardTo(0)(routed)), cancelAfterChunks: 1 }),
    })
    expect(result.destination).toBe(addressOf(stack, only))
    await until(
      async () =>
        (await metricTotal(stack, 'kinference_scorer_requests_total', {
          pod: only,
          outcome: 'client-gone',
        })) === 1,
    )
  })

  it('routes any model on a pool of defaults (a served model "*"), reading the pods’ load whatever their model_name', async () => {
    // What the controller makes of an upstream InferencePool no Kinference pool names.
    const { stack, client } = await startEppStack(
      poolSpec({
        models: [{ name: '*', tokenizer: 'qwen3', maxContextTokens: 10_000_000 }],
        routing: { strategy: 'gie-default' },
      } as never),
    )
    // The pods serve a model of their own (start-simulated-pools.ts: anyModelName).
    const podModel = 'simulated-model'
    const body = chat(words(7, 100), 'any model', { model: podModel })
    const result = await replayEnvoy(client, { body: JSON.stringify(body), response: forwardTo(0) })
    expect(result.immediate).toBeNull()
    expect(JSON.parse(result.echoedResponseBody.toString()).model).toBe(podModel)
    const served = podAt(stack, (result.destination ?? '').split(',')[0] as string)
    await until(
      async () =>
        (await metricTotal(stack, 'kinference_scorer_requests_total', {
          pod: served,
          outcome: 'completed',
        })) === 1,
    )
    // The simulated pods label their series with their own model's name, not "*": a
    // request running there (sent past the picker) shows in the load the scorer reads.
    const busy = new AbortController()
    const http = stack.scorer.pools[0]?.endpoint(served)?.http as string
    void fetch(`${http}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        chat('busy', 'long', { model: podModel, stream: true, max_tokens: 30_000 }),
      ),
      signal: busy.signal,
    }).catch(() => {})
    stacks.defer(() => busy.abort())
    await until(async () => {
      const pods = (await adminPods(stack)).pools[0]?.pods ?? []
      return (pods.find((pod) => pod.name === served)?.metrics?.running ?? 0) >= 1
    })
  })
})
