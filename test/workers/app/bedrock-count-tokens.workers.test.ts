import { env } from 'cloudflare:workers'
import {
  BedrockRuntimeClient,
  ConverseCommand,
  type ConverseCommandInput,
} from '@aws-sdk/client-bedrock-runtime'
import { afterAll, describe, expect, it } from 'vitest'
import type { ConverseRequest } from '../../../shared/bedrock/converse-request.ts'
import { countBedrockTokens } from '../../../workers/app/bedrock-count-tokens.ts'
import type { RequestPathStack } from '../../support/request-path-stack.ts'

// Runs in workerd (the SDK over fetch); the Bedrock stand-in was started in Node by the
// workers project's global setup and reaches this Worker as a binding.
const stack = JSON.parse(env.REQUEST_PATH_STACK as string) as RequestPathStack
const client = new BedrockRuntimeClient({
  region: 'us-east-1',
  endpoint: stack.bedrockUrl,
  credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
  maxAttempts: 1,
})
afterAll(() => client.destroy())

const request: ConverseRequest = {
  system: [{ text: 'You are terse.' }],
  messages: [
    { role: 'user', content: [{ text: 'Weather in Paris?' }] },
    {
      role: 'assistant',
      content: [{ toolUse: { toolUseId: 't1', name: 'get_weather', input: { city: 'Paris' } } }],
    },
    { role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'sunny' }] } }] },
  ],
  toolConfig: {
    tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object' } } } }],
  },
}

describe('countBedrockTokens in workerd', () => {
  it("counts a request as the stand-in's Converse bills it", async () => {
    const count = await countBedrockTokens(client, 'fake.workerd-count', request)
    const { usage } = await client.send(
      // No image here, so the wire shape is the SDK's.
      new ConverseCommand({ modelId: 'fake.workerd-count', ...request } as ConverseCommandInput),
    )
    expect(count).toBeGreaterThan(0)
    expect(count).toBe(usage?.inputTokens)
  })

  it('returns null for a model without CountTokens', async () => {
    expect(await countBedrockTokens(client, 'fake.workerd+no-count-tokens', request)).toBeNull()
  })
})
