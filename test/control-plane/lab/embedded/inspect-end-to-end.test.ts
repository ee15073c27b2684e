import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import { prepareRequest } from '../../../../control-plane/scorer/serving/prepare-request.ts'
import type { Decision } from '../../../../shared/state/decision-entry.ts'
import type { PodState } from '../../../../shared/state/pod-state.ts'
import type { QuotaUse } from '../../../../shared/state/quota-use.ts'
import { createCacheSalter } from '../../../../shared/tenancy/cache-salt.ts'
import { type EmbeddedOnRedis, startEmbeddedOnRedis } from '../../../support/embedded-on-redis.ts'
import { post } from '../../../support/embedded-stack.ts'
import { redisUrl, useRedisTestNamespaces } from '../../../support/redis-test-namespaces.ts'
import { runCli } from '../../../support/run-cli.ts'

// uniquePrefix's keys go after each test; the stack's must last the whole file.
const { redis, uniquePrefix } = useRedisTestNamespaces()
const system =
  'You are the inspect test. Answer briefly, in the voice of a lighthouse keeper, always.'
const messages = (question: string) => [
  { role: 'system', content: system },
  { role: 'user', content: question },
]

/**
 * Done when, point 1: the embedded default with REDIS_URL, a few requests through the
 * edge, then every `kinfctl inspect` view shows them, read from Redis alone.
 */
describe('kinfctl inspect against the embedded default with Redis', () => {
  let running: EmbeddedOnRedis
  let stack: EmbeddedStack
  let prefix: string
  let dir: string
  const inspect = (...args: string[]) => running.inspect(...args)
  const json = <T>(...args: string[]) => running.inspectJson<T>(...args)

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kinf-inspect-'))
    // Small enough that a few requests show in the buckets before they refill.
    running = await startEmbeddedOnRedis(redis, { requestsPerMinute: 60, tokensPerMinute: 1_000 })
    ;({ stack, prefix } = running)
    // Streamed, so the scorer sees the first token: the log gets an actual TTFT.
    for (const [i, model] of ['qwen3.8-27b-fp8', 'qwen3.8-27b-fp8', 'gpt-4o'].entries()) {
      const response = await post(stack, {
        model,
        stream: true,
        messages: messages(`question ${i}`),
        max_tokens: 4,
      })
      expect(response.status).toBe(200)
      await response.text()
    }
    await new Promise((resolve) => setTimeout(resolve, 300)) // the pods' KV events
    await stack.scorer.flushState()
  }, 120_000)
  afterAll(() => running?.close())

  it('pods: every pod of both pools, as this replica sees it', async () => {
    const { pods } = await json<{ pods: PodState[] }>('pods')
    expect(pods.map((p) => p.pod).sort()).toEqual(stack.pods.map((p) => p.config.podName).sort())
    for (const pod of pods) {
      expect(pod.replicas).toEqual([stack.scorer.replica])
      expect(pod).toMatchObject({ healthy: true, indexReady: true, trust: 'precise' })
      expect(pod.events?.replays).toBeGreaterThanOrEqual(1)
    }
    const held = pods.filter((p) => (p.blocksIndexed ?? 0) > 0)
    expect(held.length).toBeGreaterThan(0)
    expect(held.every((p) => p.pool === 'demo/sim-27b')).toBe(true)
    const table = await inspect('pods', '--pool', 'sim-27b')
    expect(table.code).toBe(0)
    expect(table.stdout.split('\n')[0]).toMatch(/^POOL\s+POD\s+READY\s+TRUST/)
    expect(table.stdout).not.toContain('sim-small')
  })

  it('decisions: each request with its tenant, rule, backend, pod, and how it ended', async () => {
    const { decisions, summary } = await json<{
      decisions: Decision[]
      summary: { decisions: number; ended: number; completed: number }
    }>('decisions')
    expect(decisions).toHaveLength(3)
    expect(summary).toMatchObject({ decisions: 3, ended: 3, completed: 3 })
    for (const d of decisions) {
      expect(d).toMatchObject({
        tenant: 'demo',
        policy: 'demo/demo',
        pool: 'demo/sim-27b',
        replica: stack.scorer.replica,
        strategy: 'kinference',
      })
      expect(d.rule).toEqual(expect.any(String))
      expect(d.backend).toEqual(expect.any(String))
      expect(d.predictedTtftMs).toBeGreaterThan(0)
      expect(d.end).toMatchObject({ outcome: 'completed', status: 200, outputTokens: 4 })
      expect(d.end?.ttftMs).toBeGreaterThan(0)
    }
    // The scorer decided by the policy bundle sent along: its rule, and the backend chosen.
    expect(decisions.map((d) => d.rule)).toEqual(Array(3).fill('local-then-bedrock'))
    for (const d of decisions) expect(d.matchedTokens).toBeLessThanOrEqual(d.promptTokens)
    const table = await inspect('decisions', '--tenant', 'demo', '--since', '10m')
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(
      /3 decisions, 3 ended \(3 completed\); TTFT \|actual-predicted\| p50/,
    )
    expect(await json('decisions', '--pool', 'sim-small')).toMatchObject({ decisions: [] })
  })

  it('tenants: the demo tenant buckets, charged by the requests', async () => {
    const { accounts } = await json<{ accounts: QuotaUse[] }>('tenants')
    const demo = accounts.find((a) => a.account === 'demo')
    expect(demo).toMatchObject({ kind: 'tenant', owner: 'demo/demo', untouched: false })
    expect(demo?.requests?.capacity).toBe(60)
    expect(demo?.requests?.available).toBeLessThan(60)
    expect(demo?.tokens?.available).toBeLessThan(1_000)
  })

  it('snapshot: the embedded default published its compiled snapshot', async () => {
    const report = await json<{ version: number; hash: string }>('snapshot')
    expect(report).toMatchObject({ version: 1, hash: stack.snapshot.hash })
    const file = join(dir, 'snapshot.json')
    await writeFile(file, JSON.stringify(stack.snapshot))
    const same = await json<{ diff: { changes: unknown[] } }>('snapshot', '--diff', file)
    expect(same.diff.changes).toEqual([])
    const yaml = await inspect('snapshot', '-o', 'yaml')
    expect(yaml.stdout).toContain(`hash: ${stack.snapshot.hash}`)
  })

  it('prefix: the pods holding the prompt and the pod the router would choose', async () => {
    const file = join(dir, 'messages.json')
    await writeFile(file, JSON.stringify(messages('question 0')))
    // The demo tenant's prefix cache is Isolated: its blocks are keyed with its cache_salt,
    // which inspect derives from the edge's signing secret.
    const run = await runCli(
      ['inspect', 'prefix', '--model', 'qwen3.8-27b-fp8', '--messages-file', file].concat([
        '--tenant',
        'demo',
        '--prefix',
        prefix,
        '-o',
        'json',
      ]),
      '',
      { env: { REDIS_URL: redisUrl, KINFERENCE_SIGNING_SECRET: stack.signingSecret } },
    )
    expect(run.stderr).toBe('')
    const report = JSON.parse(run.stdout) as {
      pool: string
      chosen: string
      blocks: number
      pods: { pod: string; matchedBlocks: number; predictedTtftMs: number | null }[]
    }
    expect(report.pool).toBe('demo/sim-27b')
    expect(report.pods).toHaveLength(2)
    const best = Math.max(...report.pods.map((p) => p.matchedBlocks))
    expect(best).toBeGreaterThan(0)
    expect(report.pods.find((p) => p.pod === report.chosen)?.matchedBlocks).toBe(best)
    // What the scorer itself would do with this prompt now, through its own router.
    const prepared = prepareRequest(
      'compare',
      'chat',
      {
        model: 'qwen3.8-27b-fp8',
        messages: messages('question 0'),
        cache_salt: await createCacheSalter(stack.signingSecret)('demo', null),
      },
      stack.scorer.pools,
    )
    const lookup = await prepared.pool.lookup(prepared.request)
    const route = prepared.pool.router.score(lookup, performance.now())
    expect(report.chosen).toBe(route.decision.pod)
    expect(report.blocks).toBe(prepared.request.keys.length / 2)
    for (const pod of report.pods) {
      expect(pod.matchedBlocks).toBe(lookup.blocks.get(pod.pod))
      const predicted = route.predictedTtftMs.get(pod.pod) as number
      expect(Math.abs((pod.predictedTtftMs ?? 0) - predicted)).toBeLessThan(predicted * 0.25)
    }
    const text = join(dir, 'prompt.txt')
    await writeFile(text, `${system} A plain completion prompt.`)
    const completion = await inspect('prefix', '--model', 'qwen3.8-27b-fp8', '--prompt-file', text)
    expect(completion.code).toBe(0)
    expect(completion.stdout).toMatch(/^POD\s+BLOCKS\s+MATCHED/)
    expect(completion.stdout).toMatch(
      /pool demo\/sim-27b, model qwen3.8-27b-fp8: \d+ prompt tokens/,
    )
  })

  it('decisions --follow: a new request shows once it has ended', async () => {
    let stop: () => void = () => {}
    const interrupted = new Promise<void>((resolve) => {
      stop = resolve
    })
    const following = runCli(
      ['inspect', 'decisions', '--follow', '--interval', '100ms', '--prefix', prefix, '-o', 'json'],
      '',
      { env: { REDIS_URL: redisUrl }, interrupted: () => interrupted },
    )
    const response = await post(stack, {
      model: 'qwen3.8-27b-fp8',
      stream: true,
      messages: messages('followed'),
      max_tokens: 2,
    })
    const id = response.headers.get('x-request-id')
    await response.text()
    await stack.scorer.flushState()
    await new Promise((resolve) => setTimeout(resolve, 500))
    stop()
    const { code, stdout } = await following
    expect(code).toBe(0)
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Decision)
    expect(lines).toHaveLength(4)
    expect(lines[3]).toMatchObject({ requestId: id, end: { outcome: 'completed' } })
  })

  it('pods --watch: renders again every interval until interrupted', async () => {
    const { code, stdout } = await runCli(
      ['inspect', 'pods', '--watch', '--interval', '100ms', '--prefix', prefix, '-o', 'yaml'],
      '',
      {
        env: { REDIS_URL: redisUrl },
        interrupted: () => new Promise((resolve) => setTimeout(resolve, 350)),
      },
    )
    expect(code).toBe(0)
    const documents = stdout.split('---\n')
    expect(documents.length).toBeGreaterThanOrEqual(3)
    for (const document of documents) expect(document).toContain('pod: sim-27b-0')
  })

  it('bad input and missing state: one clear line, the exit status per cli-io', async () => {
    const cases: [string[], number, RegExp][] = [
      [['pods', '--pool', 'nope'], 3, /unknown pool "nope"/],
      [['decisions', '--tenant', 'nobody'], 3, /unknown tenant "nobody" \(tenants: demo\)/],
      [['decisions', '--since', 'yesterday'], 2, /--since must be a duration/],
      [
        ['prefix', '--model', 'qwen3.8-27b-fp8', '--prompt-file', join(dir, 'missing')],
        1,
        /cannot read .*missing: no such file/,
      ],
      [
        ['prefix', '--model', 'nope', '--prompt-file', join(dir, 'messages.json')],
        3,
        /no pool .* serves model "nope"/,
      ],
      [
        ['prefix', '--model', 'qwen3.8-27b-fp8', '--prompt-file', join(dir, 'prompt.txt')].concat([
          '--tenant',
          'demo',
        ]),
        2,
        /prefix cache is Isolated: set KINFERENCE_SIGNING_SECRET/,
      ],
      [
        ['prefix', '--model', 'qwen3.8-27b-fp8', '--prompt-file', join(dir, 'prompt.txt')].concat([
          '--tenant',
          'nobody',
        ]),
        3,
        /unknown tenant "nobody"/,
      ],
      [['pods', '--redis', 'redis://127.0.0.1:1'], 5, /connecting: connect ECONNREFUSED/],
      [['pods', '-o', 'xml'], 2, /-o must be table, json or yaml/],
    ]
    for (const [args, code, message] of cases) {
      const result = await inspect(...args)
      expect({ args, code: result.code }).toEqual({ args, code })
      expect(result.stderr.split('\n')[0]).toMatch(message)
    }
    const empty = await runCli(['inspect', 'pods', '--prefix', uniquePrefix()], '', {
      env: { REDIS_URL: redisUrl },
    })
    expect(empty.code).toBe(3)
    expect(empty.stderr).toMatch(/holds no Kinference state/)
    const noRedis = await runCli(['inspect', 'pods'], '', { env: {} })
    expect(noRedis.code).toBe(2)
    expect(noRedis.stderr).toMatch(/give --redis URL or set REDIS_URL/)
  })
})
