import OpenAI from 'openai'
import {
  type EmbeddedStack,
  startEmbedded,
} from '../../control-plane/lab/embedded/start-embedded.ts'
import type { KinferenceResource } from '../../shared/crd/resource.ts'
import { createMemoryQuotaStore } from '../../shared/quota/memory-quota-store.ts'

/** The embedded default for tests: 2 pods per pool at time scale 50, quotas in memory. */
export async function start(options: Partial<Parameters<typeof startEmbedded>[0]> = {}) {
  return startEmbedded({
    port: 0,
    pods: 2,
    timeScale: 50,
    quotas: createMemoryQuotaStore(),
    redisUrl: null,
    log: () => {},
    ...options,
  })
}

export const card = 'Please charge my card 4111 1111 1111 1111 for the order.'

export const client = (stack: EmbeddedStack, key = stack.demoKey) =>
  new OpenAI({ baseURL: `${stack.edge.url}/v1`, apiKey: key, maxRetries: 0 })

export const post = (stack: EmbeddedStack, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${stack.edge.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.demoKey}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })

export const errorOf = async (response: Response) =>
  (
    (await response.json()) as {
      error: { message: string; type: string; code: string; param: string | null }
    }
  ).error

/** Every pod over its TTFT SLO, and deferred work refused at once. */
export const saturatedPool = (resource: KinferenceResource) => {
  if (resource.kind === 'InferencePool') resource.spec.ttftSloMs = 0.001
  if (resource.kind === 'InferencePolicy')
    for (const rule of resource.spec.rules)
      if (rule.action.deferUntilIdle) rule.action.deferUntilIdle.maxWaitMs = 0
}

/** What the official client threw (an APIError with OpenAI's fields), else the test fails. */
export async function thrown(
  call: Promise<unknown>,
): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  )
  if (!(error instanceof OpenAI.APIError)) throw new Error(`expected an APIError, got ${error}`)
  return error
}
