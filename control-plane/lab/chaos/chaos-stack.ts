import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTcpProxy, type TcpProxy } from '../../../test/support/tcp-proxy.ts'
import { type FakeBedrock, startFakeBedrock } from '../bedrock-stand-in/start-fake-bedrock.ts'
import { type ChaosClient, createChaosClient } from './chaos-client.ts'
import { type ChaosPart, type ChaosPod, chaosPod, freePort, processPart } from './chaos-parts.ts'
import { type ChaosTenant, chaosNamespace, chaosSnapshot } from './chaos-platform.ts'

export interface ChaosStackOptions {
  /** The real Redis the scorers and the edge reach, through a proxy a scenario can cut. */
  redisUrl: string
  pods: number
  scorers: number
  timeScale: number
  seed: number
  /** Requests per minute of the tenants' quota. */
  requestsPerMinute?: number
  /** The scorers keep their index in Redis (else each in memory). */
  scorerIndexInRedis?: boolean
  /** The edge's drain and the like: extra arguments of `kinfctl edge`. */
  edgeArgs?: string[]
  scorerArgs?: string[]
  /** Extra arguments of every pod's `kinfctl sim`, e.g. vLLM's KV-event variants. */
  podArgs?: string[]
}

export interface ChaosStack {
  /** Unique per run: in pod names, tenants and Redis key prefixes. */
  readonly run: string
  readonly prefix: string
  readonly redis: TcpProxy
  readonly bedrock: FakeBedrock
  readonly pods: ChaosPod[]
  readonly scorers: ChaosPart[]
  readonly edge: ChaosPart
  /** The tenants' API keys, by tenant name. */
  readonly keys: Map<string, string>
  readonly tenant: string
  readonly adminToken: string
  client(apiKey?: string): ChaosClient
  /** GET a scorer's admin API (its /admin/… as JSON). */
  admin(scorer: ChaosPart, path: string, body?: unknown): Promise<unknown>
  close(): Promise<void>
}

/**
 * The real stack on loopback, every part in its own process: simulated vLLM pods (one
 * process each, on 127.0.0.x), scorers, the edge on Node; Redis through a cuttable proxy;
 * the local Bedrock stand-in in this process.
 */
export async function startChaosStack(options: ChaosStackOptions): Promise<ChaosStack> {
  const run = randomBytes(3).toString('hex')
  const prefix = `kinf-chaos:${run}:`
  const dir = await mkdtemp(join(tmpdir(), 'kinference-chaos-'))
  const redis = await startTcpProxy(Number(new URL(options.redisUrl).port || 6379))
  const bedrock = await startFakeBedrock({ port: 0 })
  const parts: ChaosPart[] = []
  const closeAll = async () => {
    await Promise.all(parts.splice(0).map((part) => part.stop('SIGKILL')))
    await Promise.all([redis.stop(), bedrock.close(), rm(dir, { recursive: true, force: true })])
  }
  try {
    const tenants = ['main', 'closed'].map((kind) => tenantOf(`chaos-${run}-${kind}`, options))
    const keys = new Map(tenants.map((tenant) => [tenant.tenant.name, tenant.key]))
    const base = await freePort()
    const ports = { http: base, events: base + 1, replay: base + 2 }
    const snapshot = await chaosSnapshot({
      ports,
      bedrockUrl: bedrock.url,
      tenants: tenants.map((tenant) => tenant.tenant),
    })
    const snapshotFile = join(dir, 'snapshot.json')
    await writeFile(snapshotFile, JSON.stringify(snapshot))
    const pods = Array.from({ length: options.pods }, (_, i) =>
      chaosPod({
        name: `chaos-${run}-${String.fromCharCode(97 + i)}`,
        ip: `127.0.0.${20 + i}`,
        ports,
        timeScale: options.timeScale,
        seed: options.seed + i,
        env: {},
        extraArgs: options.podArgs ?? [],
      }),
    )
    parts.push(...pods)
    await Promise.all(pods.map((pod) => pod.start()))
    const signingSecret = randomBytes(24).toString('base64url')
    const adminToken = randomBytes(18).toString('base64url')
    const scorers: ChaosPart[] = []
    for (let i = 0; i < options.scorers; i++) {
      const port = await freePort()
      const metricsPort = await freePort()
      const url = `http://127.0.0.1:${port}`
      const scorer = processPart({
        name: `scorer-${i}`,
        url,
        metricsUrl: `http://127.0.0.1:${metricsPort}`,
        ready: /scorer listening on/,
        env: {
          KINFERENCE_SIGNING_SECRETS: signingSecret,
          KINFERENCE_ADMIN_TOKEN: adminToken,
          ...(options.scorerIndexInRedis === false ? {} : { REDIS_URL: redis.url }),
        },
        args: () => [
          'scorer',
          '--port',
          String(port),
          '--metrics-port',
          String(metricsPort),
          '--config',
          snapshotFile,
          '--redis-prefix',
          prefix,
          '--drain-timeout',
          '5s',
          ...pods.map(
            (pod) =>
              `--pod=name=${pod.name},http=${pod.url},events=${pod.events},replay=${pod.replay},pool=${chaosNamespace}/chaos`,
          ),
          ...(options.scorerArgs ?? []),
        ],
      })
      scorers.push(scorer)
      parts.push(scorer)
      await scorer.start()
    }
    const edgePort = await freePort()
    const edgeMetricsPort = await freePort()
    const edge = processPart({
      name: 'edge',
      url: `http://127.0.0.1:${edgePort}`,
      metricsUrl: `http://127.0.0.1:${edgeMetricsPort}`,
      ready: /edge listening on/,
      env: {
        KINFERENCE_SIGNING_SECRET: signingSecret,
        REDIS_URL: redis.url,
        // Without keys the SDK cannot sign, and every Bedrock call fails before it is sent;
        // the Bedrock stand-in checks only their shape.
        AWS_ACCESS_KEY_ID: 'AKIDCHAOSEXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'not-a-secret',
      },
      args: () => [
        'edge',
        '--port',
        String(edgePort),
        '--metrics-port',
        String(edgeMetricsPort),
        '--scorer',
        scorers.map((scorer) => scorer.url).join(','),
        '--config',
        snapshotFile,
        ...(options.edgeArgs ?? []),
      ],
    })
    parts.push(edge)
    await edge.start()
    const main = tenants[0]?.tenant.name ?? ''
    return {
      run,
      prefix,
      redis,
      bedrock,
      pods,
      scorers,
      edge,
      keys,
      tenant: main,
      adminToken,
      client: (apiKey = keys.get(main) ?? '') =>
        createChaosClient({ baseUrl: edge.url, apiKey, nowMs: () => performance.now() }),
      admin: (scorer, adminPath, body) => adminCall(scorer.url, adminPath, adminToken, body),
      close: closeAll,
    }
  } catch (error) {
    await closeAll()
    throw error
  }
}

/**
 * `body` on a stack of its own (three pods, one scorer, real time unless told otherwise),
 * closed whatever happens: what most scenarios do.
 */
export async function withChaosStack<T>(
  context: { redisUrl: string; seed: number },
  options: Partial<Omit<ChaosStackOptions, 'redisUrl' | 'seed'>>,
  body: (stack: ChaosStack) => Promise<T>,
): Promise<T> {
  const stack = await startChaosStack({
    redisUrl: context.redisUrl,
    seed: context.seed,
    pods: 3,
    scorers: 1,
    timeScale: 1,
    ...options,
  })
  try {
    return await body(stack)
  } finally {
    await stack.close()
  }
}

function tenantOf(name: string, options: ChaosStackOptions) {
  const keyId = randomBytes(6).toString('hex')
  const secret = randomBytes(24).toString('base64url')
  const tenant: ChaosTenant = {
    name,
    keyId,
    keySha256: createHash('sha256').update(secret).digest('hex'),
    requestsPerMinute: options.requestsPerMinute ?? 100_000,
  }
  return { tenant, key: `kinf_${keyId}_${secret}` }
}

async function adminCall(
  url: string,
  path: string,
  token: string,
  body: unknown,
): Promise<unknown> {
  const response = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(5_000),
  })
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`)
  return response.json()
}
