import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type KubeApiServer, startKubeApiServer } from '../kube-api-server/start-kube-api-server.ts'
import { type KubectlResult, runKubectl } from '../kubectl.ts'
import { redisUrl } from '../redis-test-namespaces.ts'
import { e2eModel, type PoolPorts } from './e2e-resources.ts'
import { type KinfctlProcess, startKinfctl } from './kinfctl-process.ts'

/** One run's names, ports and secrets: unique, so runs and other suites never collide. */
export function e2eRun() {
  const run = randomBytes(3).toString('hex')
  const base = 20_000 + Math.floor(Math.random() * 20_000)
  const secret = randomBytes(24).toString('base64url')
  return {
    run,
    prefix: `kinf-e2e:${run}:`,
    ports: { http: base, events: base + 1, replay: base + 2 } satisfies PoolPorts,
    pods: ['a', 'b', 'c'].map((letter, i) => ({
      name: `e2e-${run}-${letter}`,
      ip: `127.0.0.${i + 2}`,
    })),
    signingSecret: randomBytes(24).toString('hex'),
    adminToken: randomBytes(24).toString('hex'),
    apiKey: `kinf_e2ekey_${secret}`,
    keySha256: createHash('sha256').update(secret).digest('hex'),
    dir: mkdtempSync(join(tmpdir(), 'kinference-e2e-')),
  }
}
export type E2eRun = ReturnType<typeof e2eRun>

export async function startE2eCluster(run: E2eRun) {
  const server: KubeApiServer = await startKubeApiServer({
    namespaces: ['default', 'kinference'],
    bookmarkIntervalMs: 500,
  })
  const home = join(run.dir, 'home')
  const kubectl = (...args: string[]): Promise<KubectlResult> =>
    runKubectl(args, { kubeconfig: server.kubeconfigPath, home, timeoutMs: 30_000 })
  return { server, kubectl }
}

export function startSim(run: E2eRun, pod: { name: string; ip: string }): KinfctlProcess {
  return startKinfctl(`sim ${pod.name}`, [
    'sim',
    '--pods',
    '1',
    '--host',
    pod.ip,
    '--name',
    pod.name,
    '--model',
    e2eModel,
    '--port',
    String(run.ports.http),
    '--zmq-port',
    String(run.ports.events),
    '--time-scale',
    '50',
    // As Kinference deploys vLLM: the scorer's index-trust check reads cached_tokens.
    '--enable-prompt-tokens-details',
  ])
}

export function startController(run: E2eRun, kubeconfig: string, redis = redisUrl): KinfctlProcess {
  return startKinfctl('controller', [
    'controller',
    '--kubeconfig',
    kubeconfig,
    '--namespace',
    'kinference',
    '--redis',
    redis,
    '--redis-prefix',
    run.prefix,
    '--listen',
    '127.0.0.1:0',
    '--lease-duration',
    '3s',
    '--renew-deadline',
    '2s',
    '--retry-period',
    '500ms',
    '--debounce',
    '20ms',
  ])
}

export function startScorerProcess(run: E2eRun): KinfctlProcess {
  return startKinfctl(
    'scorer',
    [
      ...['scorer', '--port', '0', '--metrics-port', '0'],
      ...['--config', redisUrl, '--config-prefix', run.prefix],
    ],
    {
      KINFERENCE_SIGNING_SECRETS: run.signingSecret,
      KINFERENCE_ADMIN_TOKEN: run.adminToken,
      REDIS_URL: redisUrl,
    },
  )
}

export function startEdgeProcess(run: E2eRun, scorerUrl: string): KinfctlProcess {
  return startKinfctl(
    'edge',
    [
      'edge',
      '--port',
      '0',
      '--metrics-port',
      '0',
      '--scorer',
      scorerUrl,
      '--config',
      redisUrl,
      '--config-prefix',
      run.prefix,
    ],
    {
      KINFERENCE_SIGNING_SECRET: run.signingSecret,
    },
  )
}

/** A chat request through the edge: the status, the pod the decision header names, the body. */
export async function chat(edgeUrl: string, run: E2eRun, content: string) {
  const response = await fetch(`${edgeUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${run.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: e2eModel, messages: [{ role: 'user', content }], max_tokens: 4 }),
  })
  const body = await response.text()
  const pod = /pod=([^;]+)/.exec(response.headers.get('x-kinference-decision') ?? '')?.[1] ?? null
  return { status: response.status, pod, body }
}
