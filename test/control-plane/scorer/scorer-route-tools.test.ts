import { describe, expect, it } from 'vitest'
import { estimateRequestPromptTokens } from '../../../shared/openai/estimate-request-tokens.ts'
import { parseOpenAiRequest } from '../../../shared/openai/openai-request.ts'
import { decidedHeader, RouteDecision } from '../../../shared/scorer-api/route-protocol.ts'
import { routeOnPlatform } from '../../support/route-platform.ts'
import { model, poolSpec, type Stack } from '../../support/scorer-stack.ts'
import { tokenizeOn } from '../../support/sim-pods.ts'
import { snapshotOf, startFromSnapshot, startPods } from '../../support/snapshot-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

// The prompt length the policy sees for a request with tools: the pool's tokenizer renders
// the tool definitions into the prompt as the pod's chat template does, so its count is
// the pod's, with no estimate of the tools added on top; a pool without its tokenizer
// has the edge's estimate, which counts the tools once.

const stacks = useScorerStacks()

const description = Array.from(
  { length: 120 },
  (_, i) => `Step ${i}: look the order up by its number and report its state.`,
).join(' ')
const tools = [
  {
    type: 'function',
    function: {
      name: 'lookup_order',
      description,
      parameters: {
        type: 'object',
        properties: { order: { type: 'string', description: 'The order number' } },
        required: ['order'],
      },
    },
  },
]
const messages = [{ role: 'user', content: 'Where is my order 1234?' }]
const body = { model, messages, tools, max_tokens: 2 }

/** The prompt length the saturated pool's decision (a burst, answered to the edge) carries. */
async function decidedPromptTokens(s: Stack, text = JSON.stringify(body)): Promise<number> {
  // The platform's policy for acme: the saturated pool bursts to Bedrock.
  const answer = await routeOnPlatform(s, text)
  expect(answer.status, answer.text).toBe(200)
  expect(answer.headers.get(decidedHeader)).toBe('1')
  const decided = RouteDecision.parse(JSON.parse(answer.text))
  expect(decided.decision.kind).toBe('serve')
  return decided.promptTokens
}

/** The pod's own count of the request (its /tokenize renders the tools with its template). */
async function podCount(s: Stack, request: object | string): Promise<number> {
  const pod = s.pods[0]
  if (!pod) throw new Error('no pod')
  const answer = await tokenizeOn(pod, request)
  expect(answer.status).toBe(200)
  return answer.count
}

/** One simulated pod (Qwen3's own model) behind the pool "default" with `spec`. */
async function startPool(spec: ReturnType<typeof poolSpec>): Promise<Stack> {
  const pods = await startPods(1)
  return stacks.closing(
    await startFromSnapshot(pods, await snapshotOf([{ name: 'default', spec, pods }])),
  )
}

describe('the prompt length of a routed request with tools', () => {
  it('is the pod’s count, tools rendered once, where the pool has its tokenizer', async () => {
    const stack = await startPool(poolSpec({ ttftSloMs: 0.001 }))
    const withTools = await podCount(stack, { model, messages, tools })
    const withoutTools = await podCount(stack, { model, messages })
    // The description is hundreds of tokens: counting it twice could not go unseen.
    expect(withTools - withoutTools).toBeGreaterThan(500)
    expect(await decidedPromptTokens(stack)).toBe(withTools)
  })

  it('is the edge’s estimate, tools included, where the pool cannot load its tokenizer', async () => {
    const spec = poolSpec({
      ttftSloMs: 0.001,
      models: [{ name: model, tokenizer: '/nonexistent/dir', maxContextTokens: 32_768 }],
    })
    const stack = await startPool(spec)
    const parsed = parseOpenAiRequest('chat', body)
    if ('issues' in parsed) throw new Error(parsed.issues.message)
    const estimate = estimateRequestPromptTokens(parsed.request)
    const withoutTools = parseOpenAiRequest('chat', { model, messages })
    if ('issues' in withoutTools) throw new Error(withoutTools.issues.message)
    expect(estimate).toBeGreaterThan(estimateRequestPromptTokens(withoutTools.request) + 500)
    expect(await decidedPromptTokens(stack)).toBe(estimate)
  })

  it('reads the client’s own JSON text, so a schema’s float literals count as the pod’s Python reads them', async () => {
    const stack = await startPool(poolSpec({ ttftSloMs: 0.001 }))
    // 50.0 and 1000.0 are floats to vLLM's json.loads and print so; JSON.parse makes them 50.
    const text = `{"model":${JSON.stringify(model)},"messages":${JSON.stringify(messages)},"max_tokens":2,"tools":[{"type":"function","function":{"name":"set_limit","description":"Sets the limit.","parameters":{"type":"object","properties":{"limit":{"type":"number","minimum":50.0,"maximum":1000.0,"default":100.0}},"required":["limit"]}}}]}`
    const reparsed = JSON.stringify(JSON.parse(text))
    const fromText = await podCount(stack, text)
    // The pod itself counts the two texts apart: the literals are not a detail of ours.
    expect(fromText).not.toBe(await podCount(stack, reparsed))
    expect(await decidedPromptTokens(stack, text)).toBe(fromText)
  })
})
