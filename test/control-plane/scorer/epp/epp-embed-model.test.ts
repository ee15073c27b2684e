import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createExtProcClient, replayEnvoy } from '../../../support/ext-proc-client.ts'
import { poolSpec } from '../../../support/scorer-stack.ts'
import { useScorerStacks } from '../../../support/use-scorer-stacks.ts'

// The scorer as an Endpoint Picker refuses a chat to an embedding model (task Embed) as
// the scorer's own route does: 400 model_not_supported, no endpoint picked, since vLLM's
// pooling runner has no /v1/chat/completions.

const tlsDir = join(import.meta.dirname, '../../../fixtures/epp-tls')
const tls = { certFile: join(tlsDir, 'cert.pem'), keyFile: join(tlsDir, 'key.pem') }
const stacks = useScorerStacks()
const closers: (() => void)[] = []
afterEach(() => {
  for (const close of closers.splice(0)) close()
})

describe('the Endpoint Picker asked for an embedding model', () => {
  it('answers a chat with an ImmediateResponse 400 model_not_supported', async () => {
    const embedder = 'qwen3-embedding-sim'
    const stack = await stacks.start({
      pods: 1,
      epp: { host: '127.0.0.1', port: 0, tls },
      spec: poolSpec({
        models: [{ name: embedder, tokenizer: 'qwen3', maxContextTokens: 8192, task: 'Embed' }],
      }),
    })
    const client = createExtProcClient(`127.0.0.1:${stack.scorer.eppPort as number}`, {
      caPem: readFileSync(tls.certFile, 'utf8'),
    })
    closers.push(() => client.close())
    const result = await replayEnvoy(client, {
      body: JSON.stringify({ model: embedder, messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(result.immediate?.status).toBe(400)
    expect(JSON.parse(result.immediate?.body ?? '{}').error).toMatchObject({
      code: 'model_not_supported',
      param: 'model',
    })
    expect(result.destination).toBeNull()
  })
})
