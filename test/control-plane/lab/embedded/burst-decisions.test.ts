import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import {
  externalOutcome,
  externalStrategy,
} from '../../../../control-plane/state/external-decision.ts'
import type { Decision } from '../../../../shared/state/decision-entry.ts'
import { post, saturatedPool, start } from '../../../support/embedded-stack.ts'
import { redisUrl, useRedisTestNamespaces } from '../../../support/redis-test-namespaces.ts'
import { runCli } from '../../../support/run-cli.ts'

const { redis } = useRedisTestNamespaces()

/**
 * Issue 28: the decision log left out requests served by Bedrock. The scorer decides a
 * burst and hands it back to the edge: it logs that hand-over, so `kinfctl inspect
 * decisions` and the status page show the request, with the provider and its model.
 */
describe('a burst to the Bedrock stand-in is in the decision log', () => {
  let stack: EmbeddedStack
  const prefix = `kinf-test:${randomUUID()}:`
  const inspect = (...args: string[]) =>
    runCli(['inspect', 'decisions', ...args, '--prefix', prefix], '', {
      env: { REDIS_URL: redisUrl },
    })

  beforeAll(async () => {
    stack = await start({ redisUrl, redisPrefix: prefix, patch: saturatedPool })
  }, 60_000)
  afterAll(async () => {
    await stack?.close()
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
  })

  it('logs the burst with its tenant, rule, backend and provider, ended as the edge’s', async () => {
    const before = stack.bedrock.requests.length
    const response = await post(
      stack,
      {
        model: 'qwen3.8-27b-fp8',
        messages: [{ role: 'user', content: 'burst me' }],
        max_tokens: 5,
      },
      { 'x-request-id': 'client-burst-1' },
    )
    expect(response.status).toBe(200)
    expect(response.headers.get('x-kinference-decision')).toContain('backend=demo/bedrock-claude')
    expect(stack.bedrock.requests.length).toBe(before + 1)
    await stack.scorer.flushState()
    const run = await inspect('-o', 'json')
    expect(run.stderr).toBe('')
    const { decisions } = JSON.parse(run.stdout) as { decisions: Decision[] }
    expect(decisions).toHaveLength(1)
    expect(decisions[0]).toMatchObject({
      clientRequestId: 'client-burst-1',
      tenant: 'demo',
      policy: 'demo/demo',
      rule: 'local-then-bedrock',
      backend: 'demo/bedrock-claude',
      pool: 'demo/bedrock-local',
      pod: 'claude-sonnet',
      strategy: externalStrategy,
      model: 'claude-sonnet',
      replica: stack.scorer.replica,
      end: { outcome: externalOutcome, ttftMs: null, status: null },
    })
    expect(decisions[0]?.promptTokens).toBeGreaterThan(0)
    // The table says nothing was matched or predicted: no pod was asked.
    const table = await inspect()
    expect(table.code).toBe(0)
    const row = table.stdout.split('\n').find((line) => line.includes('demo/bedrock-local'))
    expect(row).toMatch(/claude-sonnet\s+external\s+-\/\d+\s+-\s+-\s+-\s+-\s+served-by-edge$/)
  })
})
