import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { type AddressInfo, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { configStoreKeys } from '../../../control-plane/config-store/config-store-keys.ts'
import { createRedisSnapshotStore } from '../../../control-plane/config-store/redis-snapshot-store.ts'
import { runKinfctl } from '../../../control-plane/kinfctl/run-kinfctl.ts'
import { demoSnapshot } from '../../../control-plane/lab/embedded/demo-snapshot.ts'
import {
  type SimulatedPools,
  startSimulatedPools,
} from '../../../control-plane/lab/embedded/start-simulated-pools.ts'
import { canonicalJson } from '../../../shared/config/canonical-json.ts'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import type { KinferenceResource } from '../../../shared/crd/resource.ts'
import { l40s27bFp8 } from '../../../shared/gpu/gpu-profile.ts'
import { mintApiKey, sha256HexOf } from '../../../shared/tenancy/api-key.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { startCommand } from '../../support/run-cli.ts'

const secret = 'edge-command-test-secret-0123'
const model = 'qwen3.8-27b-fp8'
const key = mintApiKey((n) => new Uint8Array(randomBytes(n)), { id: 'edgetest' })
const { redis, uniquePrefix } = useRedisTestNamespaces()
/** Quotas of the spawned edge in a database of their own, away from other suites' keys. */
const quotaRedisUrl = `${redisUrl}/9`

/** The demo config with this file's key, and prompts over `maxPromptTokens` refused. */
async function snapshotWith(maxPromptTokens = 16_000): Promise<ConfigSnapshot> {
  const patch = (resource: KinferenceResource) => {
    if (resource.kind !== 'InferencePolicy') return
    for (const rule of resource.spec.rules)
      if (rule.name === 'prompt-too-long' && rule.match.promptTokens)
        rule.match.promptTokens.min = maxPromptTokens
  }
  return demoSnapshot('http://127.0.0.1:1', key.id, await sha256HexOf(key.secret), patch)
}

/** kinfctl edge in this process, with its output captured and an interrupt to send. */
function startCli(
  args: string[],
  env: Record<string, string> = { KINFERENCE_SIGNING_SECRET: secret },
) {
  const edge = startCommand((edgeArgs, io) => runKinfctl(['edge', ...edgeArgs], io), args, env)
  return {
    ...edge,
    /** The edge's URL, once it printed that it listens. */
    async url(): Promise<string> {
      await vi.waitFor(() => expect(edge.stdout()).toMatch(/^edge listening on /), {
        timeout: 20_000,
      })
      return /on (http:\/\/\S+)/.exec(edge.stdout())?.[1] as string
    },
  }
}

async function chat(url: string, words: number, apiKey = key.key) {
  const content = Array.from({ length: words }, (_, i) => `w${i % 89}`).join(' ')
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }], max_tokens: 4 }),
  })
  const body = (await response.json()) as {
    choices?: { message: { content: string } }[]
    error?: { code: string }
  }
  return { status: response.status, body }
}

let pools: SimulatedPools
let dir: string
let file: string

beforeAll(async () => {
  const snapshot = await snapshotWith()
  pools = await startSimulatedPools({
    pools: snapshot,
    podsPerPool: 1,
    sim: { profile: l40s27bFp8, timeScale: 50, seed: 3, namePrefix: (pool) => pool },
    scorer: { signingSecrets: [secret] },
    log: () => {},
  })
  dir = await mkdtemp(join(tmpdir(), 'kinf-edge-'))
  file = join(dir, 'snapshot.json')
  await writeFile(file, canonicalJson(snapshot))
}, 60_000)

afterAll(async () => {
  await pools?.close()
  await rm(dir, { recursive: true, force: true })
})

describe('kinfctl edge', () => {
  it('serves the policy of a snapshot file through the scorer, and stops when interrupted', async () => {
    const edge = startCli([
      ...['--port', '0', '--metrics-port', '0'],
      ...['--scorer', pools.scorer.url, '--config', file],
    ])
    const url = await edge.url()
    expect(edge.stdout()).toMatch(
      new RegExp(
        `^edge listening on http://127\\.0\\.0\\.1:\\d+ \\(config from ${file}, version 0\\); metrics http://127\\.0\\.0\\.1:\\d+/metrics\\n$`,
      ),
    )
    const answer = await chat(url, 40)
    expect(answer.status).toBe(200)
    expect(answer.body.choices?.[0]?.message.content).toBeTypeOf('string')
    expect((await chat(url, 5, `kinf_${key.id}_${'x'.repeat(32)}`)).status).toBe(401)
    expect(await edge.stop()).toBe(0)
    // Every line is JSON, with its level; the requests' access lines carry their ids.
    const lines = edge
      .stderr()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    for (const line of lines) expect(line).toMatchObject({ service: 'edge', level: 'info' })
    expect(lines[0]?.msg).toMatch(/^config: version 0 sha256:[a-f0-9]{64} applied$/)
    expect(lines.at(-1)?.msg).toBe('edge stopped')
    const access = lines.filter((line) => line.kind === 'access')
    expect(access.map(({ status }) => status)).toEqual([200, 401])
    for (const line of access) expect(line.request_id).toMatch(/^[0-9a-f-]{36}$/)
    await expect(fetch(`${url}/healthz`)).rejects.toThrow()
  })

  it('waits for the first snapshot in Redis, then applies each newer one without restart', async () => {
    const prefix = uniquePrefix()
    const store = await createRedisSnapshotStore({ redis: redisUrl, prefix })
    const edge = startCli([
      ...['--port', '0', '--metrics-port', '0', '--scorer', pools.scorer.url],
      ...['--config', redisUrl, '--config-prefix', prefix],
    ])
    try {
      await vi.waitFor(() => expect(edge.stderr()).toContain('waiting'))
      expect(edge.stdout()).toBe('')
      const first = await store.publish(await snapshotWith(), Date.now())
      const url = await edge.url()
      expect(edge.stdout()).toContain(`(config from ${redisUrl}, version ${first.version})`)
      expect(edge.stderr().match(/waiting/g)).toHaveLength(1)
      expect((await chat(url, 200)).status).toBe(200)

      // A policy refusing long prompts: enforced as soon as it is published.
      const tighter = await snapshotWith(50)
      const second = await store.publish(tighter, Date.now())
      await vi.waitFor(() =>
        expect(edge.stderr()).toContain(
          `config: version ${second.version} ${tighter.hash} applied`,
        ),
      )
      const refused = await chat(url, 200)
      expect(refused.status).toBe(413)
      expect(refused.body.error?.code).toBe('prompt_too_long')
      expect((await chat(url, 10)).status).toBe(200)

      // A version that does not verify is logged, and the last good one stays.
      const keys = configStoreKeys(prefix)
      const bad = second.version + 1
      await redis
        .multi()
        .set(keys.snapshot(bad), canonicalJson({ ...tighter, tenants: {} }))
        .set(keys.current, JSON.stringify({ version: bad, hash: tighter.hash, publishedAt: 1 }))
        .publish(keys.notices, JSON.stringify({ version: bad, hash: tighter.hash }))
        .exec()
      await vi.waitFor(() => expect(edge.stderr()).toMatch(/refused.*keeping version/))
      expect((await chat(url, 200)).status).toBe(413)
      expect((await chat(url, 10)).status).toBe(200)
    } finally {
      expect(await edge.stop()).toBe(0)
      await store.close()
    }
  }, 60_000)

  it('stops cleanly while still waiting for a snapshot', async () => {
    const edge = startCli([
      ...['--scorer', pools.scorer.url, '--config', redisUrl, '--config-prefix', uniquePrefix()],
    ])
    await vi.waitFor(() => expect(edge.stderr()).toContain('waiting'))
    expect(await edge.stop()).toBe(0)
    expect(edge.stdout()).toBe('')
  })

  it.each([
    [['--scorer', 'http://127.0.0.1:1'], '--config must name a snapshot file'],
    [['--config', 'x.json'], "--scorer must be the scorer's base URL"],
    [['--config', 'x.json', '--scorer', 'localhost:1'], "--scorer must be the scorer's base URL"],
    [['--config', 'x.json', '--scorer', 'http://h:1', '--port', 'eighty'], '--port must be a port'],
    [['--config', 'x.json', '--scorer', 'http://h:1', '--bogus'], "Unknown option '--bogus'"],
  ])('refuses %j with one line and exit 2', async (args, message) => {
    const edge = startCli(args)
    expect(await edge.exited).toBe(2)
    const [line, blank] = edge.stderr().split('\n')
    expect(line).toMatch(/^kinfctl edge: /)
    expect(line).toContain(message)
    // Then the usage, as for every command.
    expect(blank).toBe('')
  })

  it.each([
    [{}, 'KINFERENCE_SIGNING_SECRET must be set'],
    [{ KINFERENCE_SIGNING_SECRET: 'short' }, 'KINFERENCE_SIGNING_SECRET needs at least 16'],
  ])('refuses a missing or short secret (%j) with exit 2', async (env, message) => {
    const edge = startCli(['--config', file, '--scorer', 'http://127.0.0.1:1'], env)
    expect(await edge.exited).toBe(2)
    expect(edge.stderr().split('\n')[0]).toContain(message)
  })

  it('refuses an unreadable or tampered config file with one line and exit 1', async () => {
    const missing = startCli(['--config', join(dir, 'none.json'), '--scorer', 'http://h:1'])
    expect(await missing.exited).toBe(1)
    expect(missing.stderr()).toBe(`kinfctl edge: config ${join(dir, 'none.json')}: no such file\n`)
    const tampered = join(dir, 'tampered.json')
    await writeFile(tampered, canonicalJson({ ...(await snapshotWith()), tenants: {} }))
    const refused = startCli(['--config', tampered, '--scorer', 'http://h:1'])
    expect(await refused.exited).toBe(1)
    expect(refused.stderr()).toMatch(/^kinfctl edge: config \S+tampered\.json: .+\n$/)
  })

  it('refuses a port in use with one line and exit 1', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const { port } = taken.address() as AddressInfo
    try {
      const edge = startCli([
        ...['--port', String(port), '--metrics-port', '0'],
        ...['--scorer', 'http://h:1', '--config', file],
      ])
      expect(await edge.exited).toBe(1)
      expect(edge.stderr()).toMatch(
        new RegExp(
          `\\nkinfctl edge: edge: cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use\\n$`,
        ),
      )
    } finally {
      taken.close()
    }
  })

  it('runs as its own process and exits 0 on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      ['control-plane/kinfctl/main.ts', 'edge', '--port', '0', '--scorer', pools.scorer.url],
      { env: { ...process.env, KINFERENCE_SIGNING_SECRET: secret, REDIS_URL: quotaRedisUrl } },
    )
    child.stdin.end()
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
    })
    const [code] = await once(child, 'exit')
    // No --config: a usage error, before anything starts.
    expect(code).toBe(2)
    expect(err.split('\n')[0]).toContain('--config must name a snapshot file')
    const served = spawn(
      process.execPath,
      [
        'control-plane/kinfctl/main.ts',
        'edge',
        ...['--port', '0', '--metrics-port', '0'],
        ...['--scorer', pools.scorer.url, '--config', file],
      ],
      { env: { ...process.env, KINFERENCE_SIGNING_SECRET: secret, REDIS_URL: quotaRedisUrl } },
    )
    try {
      served.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString()
      })
      await vi.waitFor(() => expect(out).toMatch(/^edge listening on http:\/\/\S+ /), {
        timeout: 30_000,
      })
      const url = /on (http:\/\/\S+)/.exec(out)?.[1] as string
      // Quotas in Redis (REDIS_URL): the request is admitted and settled there.
      expect((await chat(url, 20)).status).toBe(200)
      served.kill('SIGTERM')
      const [exit] = await once(served, 'exit')
      expect(exit).toBe(0)
    } finally {
      served.kill('SIGKILL')
    }
  }, 60_000)
})
