import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { embeddedBanner } from '../../../../control-plane/lab/embedded/embedded-banner.ts'
import { startEmbeddedOnRedis } from '../../../support/embedded-on-redis.ts'
import { redisUrl, useRedisTestNamespaces } from '../../../support/redis-test-namespaces.ts'
import { runCli } from '../../../support/run-cli.ts'

const { redis } = useRedisTestNamespaces()
let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kinf-banner-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

describe('the npm start banner with Redis', () => {
  it('with Redis, prints an inspect prefix command that sees the demo tenant’s blocks', async () => {
    const running = await startEmbeddedOnRedis(redis, {
      requestsPerMinute: 600,
      tokensPerMinute: 1_000_000,
    })
    try {
      const { stack, prefix } = running
      const messages = [
        { role: 'system', content: 'You are the banner test. Answer in one short line, always.' },
        { role: 'user', content: 'Which pod holds this prompt?' },
      ]
      const banner = embeddedBanner(stack, {
        redisUrl,
        redisPrefix: prefix,
        snapshotPath: join(dir, 'snapshot.json'),
        metricsLine: 'off',
      })
      const response = await fetch(`${stack.edge.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.demoKey}` },
        body: JSON.stringify({ model: 'qwen3.8-27b-fp8', stream: true, max_tokens: 2, messages }),
      })
      expect(response.status).toBe(200)
      await response.text()
      await new Promise((resolve) => setTimeout(resolve, 300)) // the pods' KV events
      await stack.scorer.flushState()
      // The command as printed: its environment, then kinfctl's arguments.
      const printed =
        /^ {2}REDIS_URL=(\S+) KINFERENCE_SIGNING_SECRET=(\S+) \\\n {4}npx kinfctl (.*)$/m.exec(
          banner,
        )
      expect(printed, banner).not.toBeNull()
      const [, url = '', secret = '', command = ''] = printed as RegExpExecArray
      expect(url).toBe(redisUrl)
      expect(secret).toBe(stack.signingSecret)
      const file = join(dir, 'messages.json')
      await writeFile(file, JSON.stringify(messages))
      const args = command.split(' ').map((arg) => (arg === 'messages.json' ? file : arg))
      const run = await runCli([...args, '-o', 'json'], '', {
        env: { REDIS_URL: url, KINFERENCE_SIGNING_SECRET: secret },
      })
      expect(run.stderr).toBe('')
      const report = JSON.parse(run.stdout) as { pods: { matchedTokens: number }[] }
      expect(Math.max(...report.pods.map((p) => p.matchedTokens))).toBeGreaterThan(0)
      // Without --tenant: the same prompt unsalted matches nothing, and the report says why.
      const unsalted = await runCli(
        args.filter((arg, i) => arg !== '--tenant' && args[i - 1] !== '--tenant'),
        '',
        { env: { REDIS_URL: url } },
      )
      expect(unsalted.code).toBe(0)
      expect(unsalted.stdout).toMatch(/^POD\s+BLOCKS\s+MATCHED/)
      expect(unsalted.stdout).toContain(
        'NOT COUNTED: blocks of tenants whose prefix cache is Isolated (demo)',
      )
      expect(unsalted.stdout).toContain('KINFERENCE_SIGNING_SECRET')
      const json = await runCli(
        [
          ...args.filter((arg, i) => arg !== '--tenant' && args[i - 1] !== '--tenant'),
          '-o',
          'json',
        ],
        '',
        { env: { REDIS_URL: url } },
      )
      expect(JSON.parse(json.stdout)).toMatchObject({
        scope: { asTenant: null, notMatched: ['demo'] },
      })
    } finally {
      await running.close()
    }
  }, 120_000)
})
