import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type ChartCluster,
  chartSecrets,
  freePort,
  startRenderedContainer,
  stopChartRelease,
} from '../../support/chart-release-stack.ts'
import { eventually } from '../../support/controller/controller-fixture.ts'
import {
  e2ePlatform,
  e2ePod,
  e2ePolicy,
  e2eSlice,
  manifest,
} from '../../support/e2e/e2e-resources.ts'
import { chat, e2eRun, startE2eCluster, startSim } from '../../support/e2e/e2e-stack.ts'
import type { KinfctlProcess } from '../../support/e2e/kinfctl-process.ts'
import {
  chartDir,
  findManifest,
  type Manifest,
  parseManifests,
  templateChart,
} from '../../support/helm-chart.ts'
import type { Container } from '../../support/manifest-types.ts'
import { redisUrl } from '../../support/redis-test-namespaces.ts'

/**
 * The chart with its in-cluster edge on, as an install would go: CRDs, the rendered
 * manifests (the helm test Pod included) and a pool of simulated vLLM pods (each on its own
 * 127.0.0.x, with its Pod and EndpointSlice on the test API server) are applied with the
 * pinned kubectl; the controller, the scorer and the edge are started from their rendered
 * containers' args and env as the kubelet would (the Service addresses, which only cluster
 * DNS resolves, rewritten to this machine's ports); then a chat request goes through the
 * edge to a simulated pod, and the helm test Pod's own check runs against the edge.
 *
 * Not here: the scorer's Endpoint Picker (chart-epp-on-api-server.test.ts), and the
 * HTTPRoute and the Ingress, which are render-checked only (chart-edge-routes.test.ts):
 * the test API server has neither kind.
 */
const run = e2eRun()
const processes: KinfctlProcess[] = []
const redis = new Redis(redisUrl, { lazyConnect: true })
let cluster: ChartCluster
let manifests: Manifest[] = []
const ports = { controller: 0, scorer: 0, scorerMetrics: 0, edge: 0, edgeMetrics: 0 }
/** The in-cluster addresses of the release's Services, and where they are on this machine. */
const addresses = () => ({
  'http://kinference-scorer.kinference.svc:8080': `http://127.0.0.1:${ports.scorer}`,
  'http://kinference-edge.kinference.svc:80': `http://127.0.0.1:${ports.edge}`,
})
const toLoopback = (value: string) =>
  Object.entries(addresses()).reduce((text, [from, to]) => text.replaceAll(from, to), value)

const apply = async (file: string) => {
  const result = await cluster.kubectl('apply', '-f', file)
  expect(result.stderr, file).toBe('')
  expect(result.code).toBe(0)
  return result.stdout
}

async function start(name: string, extraArgs: string[] = []) {
  const child = await startRenderedContainer(cluster, manifests, name, {
    extraArgs,
    rewrite: toLoopback,
  })
  processes.push(child)
  return child
}

beforeAll(async () => {
  for (const key of Object.keys(ports) as (keyof typeof ports)[]) ports[key] = await freePort()
  const rendered = await templateChart({
    set: {
      'controller.port': ports.controller,
      'controller.redisPrefix': run.prefix,
      'scorer.port': ports.scorer,
      'scorer.metricsPort': ports.scorerMetrics,
      'edge.enabled': 'true',
      'edge.port': ports.edge,
      'edge.metricsPort': ports.edgeMetrics,
    },
  })
  expect(rendered.stderr).toBe('')
  manifests = parseManifests(rendered.stdout)
  writeFileSync(join(run.dir, 'release.yaml'), rendered.stdout)
  manifest(run.dir, 'secrets', chartSecrets(run))
  cluster = await startE2eCluster(run)
}, 60_000)

afterAll(() => stopChartRelease({ processes, redis, run, cluster }))

describe('the chart with the in-cluster edge, on the test API server', () => {
  it('applies: the edge’s Deployment, Service, PDB, NetworkPolicy and helm test Pod are stored', async () => {
    await apply(join(chartDir, 'crds'))
    await apply(join(run.dir, 'secrets.yaml'))
    const created = await apply(join(run.dir, 'release.yaml'))
    for (const m of manifests) expect(created).toContain(`/${m.metadata.name} created`)
    const names = await cluster.kubectl(
      'get',
      'deployments,services,pdb,networkpolicies,serviceaccounts,pods',
      '-n',
      'kinference',
      '-o',
      'name',
    )
    const edgeObjects = names.stdout.split('\n').filter((name) => name.includes('kinference-edge'))
    expect(edgeObjects.sort()).toEqual([
      'deployment.apps/kinference-edge',
      'networkpolicy.networking.k8s.io/kinference-edge',
      'pod/kinference-edge-test',
      'poddisruptionbudget.policy/kinference-edge',
      'service/kinference-edge',
      'serviceaccount/kinference-edge',
    ])
  }, 60_000)

  it('serves a chat request through the rendered edge, answered by a simulated vLLM pod', async () => {
    await apply(
      manifest(run.dir, 'platform', [...e2ePlatform(run.ports), e2ePolicy(run.keySha256)]),
    )
    const sims = run.pods.map((pod) => startSim(run, pod))
    processes.push(...sims)
    await Promise.all(sims.map((sim) => sim.waitFor(/http=/)))
    await apply(
      manifest(run.dir, 'pods', [
        ...run.pods.map((pod) => e2ePod(pod.name, pod.ip)),
        e2eSlice(run.pods, run.ports),
      ]),
    )
    // Outside a pod there is no service-account token: the test server's kubeconfig instead.
    const controller = await start('controller', ['--kubeconfig', cluster.server.kubeconfigPath])
    await controller.waitFor(/running; probes and metrics on/, 30_000)
    const scorer = await start('scorer')
    await scorer.waitFor(/scorer listening on .*config from redis/, 30_000)
    const edge = await start('edge')
    const [, edgeUrl] = (await edge.waitFor(/edge listening on (http\S+)/, 30_000)) as string[]
    expect(edgeUrl).toBe(`http://0.0.0.0:${ports.edge}`)
    const local = `http://127.0.0.1:${ports.edge}`
    expect((await fetch(`${local}/healthz`)).status).toBe(200)
    // The pool's pods reach the snapshot the edge and the scorer follow shortly after start.
    const answer = await eventually(
      async () => {
        const reply = await chat(local, run, 'hello through the chart’s edge')
        return reply.status === 200 ? reply : null
      },
      30_000,
      'a 200 through the edge',
    )
    expect(run.pods.map((pod) => pod.name)).toContain(answer.pod)
    expect(JSON.parse(answer.body).choices[0].message.content.length).toBeGreaterThan(0)
    // /metrics only on its own port.
    expect((await fetch(`${local}/metrics`)).status).toBe(404)
    expect((await fetch(`http://127.0.0.1:${ports.edgeMetrics}/metrics`)).status).toBe(200)
  }, 120_000)

  it('passes its helm test: the test Pod’s command, run with its env, checks the edge', async () => {
    const pod = findManifest(manifests, 'Pod', 'kinference-edge-test') as Manifest & {
      spec: { containers: Container[] }
    }
    const [container] = pod.spec.containers
    const command = [...(container?.command ?? []), ...(container?.args ?? [])]
    expect(command.slice(0, 2)).toEqual(['node', '-e'])
    const env = Object.fromEntries(
      (container?.env ?? []).map((variable) => [variable.name, toLoopback(variable.value ?? '')]),
    )
    expect(env.EDGE_URL).toBe(`http://127.0.0.1:${ports.edge}`)
    const passed = await runNode(command.slice(1), env)
    expect(passed.stderr).toBe('')
    expect(passed.stdout).toContain('the edge answers at')
    expect(passed.code).toBe(0)
    // And it fails where no edge answers.
    const failed = await runNode(command.slice(1), { EDGE_URL: `http://127.0.0.1:${ports.scorer}` })
    expect(failed.code).toBe(1)
    expect(failed.stderr).toContain('edge test failed')
  }, 30_000)
})

/** `node <args>` with this Node binary (the image's `node`), only the given env. */
async function runNode(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const [code] = (await once(child, 'close')) as [number]
  return { code, stdout, stderr }
}
