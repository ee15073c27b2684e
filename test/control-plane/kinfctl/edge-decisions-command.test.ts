import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { runKinfctl } from '../../../control-plane/kinfctl/run-kinfctl.ts'
import { canonicalJson } from '../../../shared/config/canonical-json.ts'
import type { Decision } from '../../../shared/state/decision-entry.ts'
import { externalOutcome, externalStrategy } from '../../../shared/state/external-strategy.ts'
import {
  demoBedrock,
  postBedrockOnly,
  useDemoEdgeFixture,
} from '../../support/demo-edge-fixture.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { runCli, startCommand } from '../../support/run-cli.ts'

/**
 * Issue 28 end to end: `kinfctl edge` with REDIS_URL writes the requests it decides alone
 * (a rule naming only Bedrock: the scorer is never asked, and here none runs) to the decision
 * log, and `kinfctl inspect decisions` lists them beside the scorers' entries.
 */
const demo = useDemoEdgeFixture()
const { uniquePrefix } = useRedisTestNamespaces()
const secret = 'edge-decisions-command-secret'
let dir = ''
let file = ''

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kinf-edge-decisions-'))
  file = join(dir, 'snapshot.json')
  await writeFile(file, canonicalJson(demo.snapshot))
  // The AWS SDK's default chain: the Bedrock stand-in takes any well-formed signature.
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIAEDGEDECISIONS000')
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'edge-decisions')
})
afterAll(async () => {
  vi.unstubAllEnvs()
  await rm(dir, { recursive: true, force: true })
})

describe('kinfctl edge and the decision log', () => {
  it('logs a Bedrock-only request it served, listed by kinfctl inspect decisions', async () => {
    const prefix = uniquePrefix()
    const edge = startCommand(
      (args, io) => runKinfctl(['edge', ...args], io),
      [
        ...['--port', '0', '--metrics-port', 'off', '--scorer', 'http://127.0.0.1:1'],
        ...['--config', file, '--redis-prefix', prefix],
      ],
      { KINFERENCE_SIGNING_SECRET: secret, REDIS_URL: redisUrl },
    )
    try {
      await vi.waitFor(() => expect(edge.stdout()).toMatch(/^edge listening on /), {
        timeout: 20_000,
      })
      const url = /on (http:\/\/\S+)/.exec(edge.stdout())?.[1] as string
      const answer = await postBedrockOnly(url, demo.demoKey, 'cli-bedrock-only-1')
      expect(answer.status).toBe(200)
      const listed = async () => {
        const run = await runCli(['inspect', 'decisions', '-o', 'json', '--prefix', prefix], '', {
          env: { REDIS_URL: redisUrl },
        })
        return run.stdout === ''
          ? []
          : (JSON.parse(run.stdout) as { decisions: Decision[] }).decisions
      }
      // Written in batches off the request's path: a moment later.
      await vi.waitFor(async () => expect(await listed()).toHaveLength(1), { timeout: 5_000 })
      const [decision] = await listed()
      expect(decision).toMatchObject({
        clientRequestId: 'cli-bedrock-only-1',
        tenant: 'demo',
        rule: 'bedrock-on-request',
        backend: demoBedrock.backend,
        pool: demoBedrock.provider,
        pod: demoBedrock.model,
        strategy: externalStrategy,
        end: { outcome: externalOutcome, status: 200 },
      })
      expect(decision?.replica).toMatch(/^edge-/)
    } finally {
      expect(await edge.stop()).toBe(0)
    }
  }, 30_000)

  it('names --redis-prefix in its usage', async () => {
    const run = await runCli(['edge', '--help'])
    expect(run.stdout + run.stderr).toContain('--redis-prefix P')
  })
})
