import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type ClientDuplexStream, credentials, type ServiceError } from '@grpc/grpc-js'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'
import { createRedisSnapshotStore } from '../../../control-plane/config-store/redis-snapshot-store.ts'
import { extProcProtos } from '../../../control-plane/scorer/epp/ext-proc-protos.ts'
import {
  type ChartCluster,
  chartSecrets,
  freePort,
  startRenderedContainer,
  stopChartRelease,
} from '../../support/chart-release-stack.ts'
import { eventually, upstreamPoolCrd } from '../../support/controller/controller-fixture.ts'
import { e2eModel, e2ePod, e2eSlice, manifest } from '../../support/e2e/e2e-resources.ts'
import { e2eRun, startE2eCluster, startSim } from '../../support/e2e/e2e-stack.ts'
import type { KinfctlProcess } from '../../support/e2e/kinfctl-process.ts'
import {
  type EnvoyReplayResult,
  type EnvoyResponseReplay,
  ExtProcCall,
  type ExtProcClient,
  replayEnvoy,
} from '../../support/ext-proc-client.ts'
import { chartDir, type Manifest, parseManifests, templateChart } from '../../support/helm-chart.ts'
import { redisUrl } from '../../support/redis-test-namespaces.ts'

/**
 * The chart with the scorer as a gateway's Endpoint Picker (scorer.epp), as an install
 * would go: CRDs (the upstream InferencePool's too), the rendered manifests with the EPP's
 * generated certificate, the example's upstream InferencePool (its pods and port pointed at
 * simulated vLLM pods on 127.0.0.x) and a Kinference InferencePool naming it, applied with
 * kubectl to the test API server. The controller and the scorer start from their rendered
 * containers (the Secret's files where the rendered volume mounts them); the controller
 * takes the upstream pool in and writes its status entry; the scorer's EPP answers gRPC
 * health over TLS with that certificate, verified for the Service's name, and picks a
 * simulated pod for a request replayed as Envoy sends it, which the test (as the gateway)
 * then sends to that pod.
 */
const run = e2eRun()
const processes: KinfctlProcess[] = []
const redis = new Redis(redisUrl, { lazyConnect: true })
let cluster: ChartCluster
let manifests: Manifest[] = []
const ports = { controller: 0, scorer: 0, scorerMetrics: 0, epp: 0 }
const tlsDir = join(run.dir, 'epp-tls')
const serviceName = 'kinference-scorer.kinference.svc'
const example = join(chartDir, 'examples/gateway-inference-pool.yaml')
const exampleText = readFileSync(example, 'utf8')
/** The example's upstream InferencePool, as written. */
const examplePool = parseAllDocuments(exampleText)
  .map((d) => d.toJS() as { kind: string; spec: Record<string, unknown> })
  .find((d) => d.kind === 'InferencePool') as {
  apiVersion: string
  kind: string
  metadata: { name: string; namespace: string }
  spec: Record<string, unknown>
}
/** The `--set` values of the example's header. */
const exampleSets = Object.fromEntries(
  [...exampleText.matchAll(/--set '?([^=' ]+)=([^' \n]+)'?/g)].map(([, k, v]) => [k, v]),
) as Record<string, string>

const apply = async (file: string) => {
  const result = await cluster.kubectl('apply', '-f', file)
  expect(result.stderr, file).toBe('')
  expect(result.code).toBe(0)
  return result.stdout
}

async function start(name: string, extraArgs: string[] = []) {
  const child = await startRenderedContainer(cluster, manifests, name, {
    extraArgs,
    // The kubelet mounts the Secret there; here its files are in this run's folder.
    rewrite: (arg) => arg.replace('/etc/kinference/epp-tls', tlsDir),
  })
  processes.push(child)
  return child
}

/** A client of the EPP as a gateway would be, trusting its certificate for the Service's name. */
function eppClient(caPem: string): ExtProcClient & { check(service: string): Promise<string> } {
  const protos = extProcProtos()
  const creds = credentials.createSsl(Buffer.from(caPem))
  const options = {
    'grpc.ssl_target_name_override': serviceName,
    'grpc.default_authority': serviceName,
  }
  const address = `127.0.0.1:${ports.epp}`
  const processor = new protos.externalProcessor(address, creds, options)
  const health = new protos.health(address, creds, options) as unknown as {
    Check(
      request: { service: string },
      done: (error: ServiceError | null, reply?: { status?: string }) => void,
    ): void
    close(): void
  }
  return {
    open: () =>
      new ExtProcCall(
        (processor.Process as () => ClientDuplexStream<unknown, unknown>).call(processor),
      ),
    check: (service) =>
      new Promise((resolve) =>
        health.Check({ service }, (error, reply) =>
          resolve(error ? `error: ${error.details}` : (reply?.status ?? 'UNKNOWN')),
        ),
      ),
    watch: () => Promise.reject(new Error('not used here')),
    close() {
      processor.close()
      health.close()
    },
  }
}

beforeAll(async () => {
  for (const key of Object.keys(ports) as (keyof typeof ports)[]) ports[key] = await freePort()
  const rendered = await templateChart({
    set: {
      ...exampleSets,
      'controller.port': ports.controller,
      'controller.redisPrefix': run.prefix,
      'scorer.port': ports.scorer,
      'scorer.metricsPort': ports.scorerMetrics,
      'scorer.epp.port': ports.epp,
    },
  })
  expect(rendered.stderr).toBe('')
  manifests = parseManifests(rendered.stdout)
  writeFileSync(join(run.dir, 'release.yaml'), rendered.stdout)
  manifest(run.dir, 'secrets', chartSecrets(run))
  cluster = await startE2eCluster(run)
}, 60_000)

afterAll(() => stopChartRelease({ processes, redis, run, cluster }))

describe('the chart with the scorer as Endpoint Picker, on the test API server', () => {
  it('applies, with the upstream CRD taking the example’s InferencePool as written', async () => {
    await apply(join(chartDir, 'crds'))
    await apply(upstreamPoolCrd)
    await apply(join(run.dir, 'secrets.yaml'))
    const created = await apply(join(run.dir, 'release.yaml'))
    for (const m of manifests) expect(created).toContain(`/${m.metadata.name} created`)
    // The Gateway and HTTPRoute kinds are not served here; the pool's are, fields checked.
    const asWritten = manifest(run.dir, 'example-pool', [examplePool])
    expect(await apply(asWritten)).toContain(
      'inferencepool.inference.networking.k8s.io/qwen-27b created',
    )
    // The generated certificate, where the rendered volume would mount it.
    mkdirSync(tlsDir)
    for (const key of ['tls.crt', 'tls.key']) {
      const read = await cluster.kubectl(
        'get',
        'secret',
        'kinference-scorer-epp-tls',
        '-n',
        'kinference',
        '-o',
        `jsonpath={.data.${key.replace('.', '\\.')}}`,
      )
      expect(read.code, read.stderr).toBe(0)
      writeFileSync(join(tlsDir, key), Buffer.from(read.stdout, 'base64'))
    }
  }, 60_000)

  it('takes the upstream pool in with the rendered controller, which writes its status entry', async () => {
    const sims = run.pods.map((pod) => startSim(run, pod))
    processes.push(...sims)
    await Promise.all(sims.map((sim) => sim.waitFor(/http=/)))
    const pools = [
      // The example's pool, its pods and port pointed at the simulated ones.
      {
        ...examplePool,
        spec: {
          ...examplePool.spec,
          selector: { matchLabels: { app: 'vllm-e2e' } },
          targetPorts: [{ number: run.ports.http }],
        },
      },
      // What those pods serve, taking pods and port from it (docs/deploy.md).
      {
        apiVersion: 'kinference.dev/v1alpha1',
        kind: 'InferencePool',
        metadata: { name: 'qwen-27b', namespace: 'kinference' },
        spec: {
          upstreamPoolRef: { name: 'qwen-27b' },
          kvEvents: { port: run.ports.events, replayPort: run.ports.replay },
          models: [{ name: e2eModel, tokenizer: 'qwen3', maxContextTokens: 32768 }],
          gpuProfile: 'l40s-27b-fp8',
          routing: { strategy: 'round-robin' },
        },
      },
      ...run.pods.map((pod) => e2ePod(pod.name, pod.ip)),
      e2eSlice(run.pods, run.ports),
    ]
    await apply(manifest(run.dir, 'pools', pools))
    const controller = await start('controller', ['--kubeconfig', cluster.server.kubeconfigPath])
    await controller.waitFor(/running; probes and metrics on/, 30_000)
    const store = await createRedisSnapshotStore({ redis: redisUrl, prefix: run.prefix })
    try {
      const endpoints = await eventually(
        async () => {
          const read = await store.current()
          const found = read?.ok ? read.published.snapshot.endpoints['kinference/qwen-27b'] : null
          return found && found.length === run.pods.length ? found : null
        },
        30_000,
        'the upstream pool’s pods in the snapshot',
      )
      expect(endpoints.map((e) => e.name).sort()).toEqual(run.pods.map((p) => p.name).sort())
    } finally {
      await store.close()
    }
    const entry = await eventually(
      async () => {
        const read = await cluster.kubectl(
          'get',
          'inferencepools.inference.networking.k8s.io',
          'qwen-27b',
          '-n',
          'kinference',
          '-o',
          'json',
        )
        const parents = (JSON.parse(read.stdout).status?.parents ?? []) as {
          controllerName?: string
          parentRef: unknown
          conditions: { type: string; status: string }[]
        }[]
        const ours = parents.find((p) => p.controllerName === 'kinference.dev/endpoint-picker')
        return ours?.conditions.every((c) => c.status === 'True') ? ours : null
      },
      30_000,
      'the controller’s status entry on the upstream pool',
    )
    expect(entry.parentRef).toEqual({
      group: '',
      kind: 'Service',
      name: 'kinference-scorer',
      namespace: 'kinference',
    })
    expect(entry.conditions.map((c) => c.type).sort()).toEqual(['Accepted', 'ResolvedRefs'])
  }, 90_000)

  it('serves the EPP over TLS with the generated certificate and picks a simulated pod', async () => {
    const scorer = await start('scorer')
    await scorer.waitFor(/scorer listening on .*config from redis/, 30_000)
    const client = eppClient(readFileSync(join(tlsDir, 'tls.crt'), 'utf8'))
    try {
      await eventually(
        async () => (await client.check('readiness')) === 'SERVING',
        30_000,
        'the EPP’s readiness',
      )
      const addresses = run.pods.map((pod) => `${pod.ip}:${run.ports.http}`)
      let answered = 0
      const result = await replayEnvoy(client, {
        body: JSON.stringify({
          model: e2eModel,
          messages: [{ role: 'user', content: 'hello through the gateway' }],
          max_tokens: 4,
        }),
        // The gateway: the request to the endpoint the EPP picked, its answer back.
        response: async (routed: EnvoyReplayResult): Promise<EnvoyResponseReplay> => {
          const endpoint = (routed.destination ?? '').split(',')[0] as string
          const reply = await fetch(`http://${endpoint}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: routed.streamedRequestBody,
          })
          answered = reply.status
          return { status: reply.status, served: endpoint, chunks: [await reply.text()] }
        },
      })
      expect(result.grpcError).toBeNull()
      expect(result.immediate).toBeNull()
      expect(addresses).toContain((result.destination ?? '').split(',')[0])
      expect(result.metadataDestination).toBe(result.destination)
      expect(answered).toBe(200)
    } finally {
      client.close()
    }
  }, 90_000)
})
