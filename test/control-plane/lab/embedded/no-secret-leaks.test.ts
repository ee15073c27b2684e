import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import { card, start } from '../../../support/embedded-stack.ts'
import { runCli } from '../../../support/run-cli.ts'

const demoSecret = 'Zq8wLk3vN5xR7tY2uP9sD4fG6hJ1mB0c'
const signingSecret = 'leak-test-signing-secret-0123456789'
const adminToken = 'leak-test-admin-token-0123456789'
/** The embedded default's stand-in credentials for the local Bedrock (start-embedded.ts). */
const awsSecret = 'embedded-demo'
const redisPassword = 'leak-test-redis-password-42'

/**
 * A full run of the embedded default, good and hostile requests alike, with every log line
 * and every answer (status, headers, body) kept: no secret may appear in any of them.
 */
describe('no secret reaches a log or an answer', () => {
  let stack: EmbeddedStack
  const logs: string[] = []
  const answers: string[] = []
  beforeAll(async () => {
    stack = await start({
      demoKey: `kinf_demo_${demoSecret}`,
      signingSecret,
      adminToken,
      log: (line) => logs.push(line),
    })
  }, 60_000)
  afterAll(() => stack?.close())

  const keep = async (response: Response) => {
    answers.push(
      `${response.status} ${JSON.stringify([...response.headers])} ${await response.text()}`,
    )
  }
  const chat = (body: unknown, key = stack.demoKey, headers: Record<string, string> = {}) =>
    fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }).then(keep)
  const ask = (content: string, model = 'qwen3.8-27b-fp8', extra: object = {}) => ({
    model,
    max_tokens: 4,
    messages: [{ role: 'user', content }],
    ...extra,
  })

  it('holds for served, refused, burst and malformed requests, and the admin surfaces', async () => {
    await chat(ask('hello'))
    await chat(ask('hello', 'qwen3.8-27b-fp8', { stream: true }))
    await chat(ask(card))
    await chat(ask('to bedrock', 'claude-sonnet'))
    await chat(ask('unknown', 'no-such-model'))
    await chat('{"model":')
    await chat(ask('x', 'qwen3.8-27b-fp8', { tools: [{ type: 'function', function: 7 }] }))
    // The right id with a wrong secret, a key of the wrong shape, the secret alone.
    await chat(ask('x'), `kinf_demo_${'A'.repeat(32)}`)
    await chat(ask('x'), `kinf_demo_${demoSecret}x`)
    await chat(ask('x'), demoSecret)
    // The scorer, as an attacker in the cluster would try it.
    for (const path of ['/v1/chat/completions', '/admin/pods', '/ui', '/ui/api/status']) {
      await fetch(`${stack.scorer.url}${path}`, {
        method: path.startsWith('/v1') ? 'POST' : 'GET',
        headers: { authorization: 'Bearer wrong-token-0123456789' },
        body: path.startsWith('/v1') ? JSON.stringify(ask('x')) : undefined,
      }).then(keep)
    }
    await fetch(`${stack.scorer.url}/ui?token=wrong`, { redirect: 'manual' }).then(keep)
    await fetch(`${stack.edge.metricsUrl}/metrics`).then(keep)
    await fetch(`${stack.scorer.metricsUrl}/metrics`).then(keep)
    expect(answers.length).toBeGreaterThan(15)
    // Commands given a Redis password, against a Redis that is not there: they print why.
    const redisUrl = `redis://:${redisPassword}@127.0.0.1:1/`
    const printed: string[] = []
    const inspect = await runCli(['inspect', 'pods', '--redis', redisUrl])
    expect(inspect.code).toBe(5)
    printed.push(inspect.stdout, inspect.stderr)
    const scorer = await runCli(['scorer', '--port', '0', '--config', redisUrl], '', {
      env: { KINFERENCE_SIGNING_SECRETS: signingSecret },
      interrupted: () => new Promise((resolve) => setTimeout(resolve, 1_500)),
    })
    printed.push(scorer.stdout, scorer.stderr)
    expect(printed.join('').length).toBeGreaterThan(0)
    const everything = [...logs, ...answers, ...printed].join('\n')
    for (const secret of [demoSecret, signingSecret, adminToken, awsSecret, redisPassword])
      expect(everything.includes(secret), `a log or an answer holds ${secret}`).toBe(false)
  })
})
