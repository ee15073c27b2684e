import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  chartDir,
  chartVariants,
  containersOf,
  findManifest,
  type Manifest,
  renderChart,
  templateChart,
} from '../../support/helm-chart.ts'
import type { Container, NetworkPolicy } from '../../support/manifest-types.ts'

/**
 * The scorer's /metrics and /health are on a port of their own (kinfctl scorer
 * --metrics-port), never on the API port the edge's ingress path reaches: the container
 * declares it, the probes and the ServiceMonitor use it, the scorer's Service does not
 * carry it, and the NetworkPolicy opens it to the metrics peers alone.
 */
interface ServicePort {
  name: string
  port: number
  targetPort: string | number
}
const servicePorts = (manifest: Manifest) =>
  (manifest.spec as { ports: ServicePort[] }).ports.map(({ name, port, targetPort }) => ({
    name,
    port,
    targetPort,
  }))

function scorerContainer(manifests: Manifest[]): Container {
  const found = containersOf(findManifest(manifests, 'Deployment', 'kinference-scorer'))[0]
  if (!found) throw new Error('no scorer container')
  return found
}

const flag = (args: string[], name: string) => args[args.indexOf(name) + 1]

describe.each(chartVariants)('the scorer’s metrics port with $name', ({ options }) => {
  let manifests: Manifest[] = []
  beforeAll(async () => {
    manifests = await renderChart(options)
  })

  it('is a container port of its own, passed to kinfctl scorer on every address', () => {
    const container = scorerContainer(manifests)
    const args = container.args ?? []
    // With scorer.epp, the EPP's ports come on top (chart-epp.test.ts).
    const epp = ['grpc-epp', 'grpc-health']
    expect(container.ports?.filter((p) => !epp.includes(p.name ?? ''))).toEqual([
      { name: 'http', containerPort: 8080, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
    ])
    expect(flag(args, '--port')).toBe('8080')
    expect(flag(args, '--metrics-port')).toBe('9090')
    expect(flag(args, '--metrics-host')).toBe('0.0.0.0')
  })

  it('is where every probe reads /health', () => {
    const container = scorerContainer(manifests)
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe'] as const)
      expect(container[probe]?.httpGet, probe).toEqual({ path: '/health', port: 'metrics' })
  })

  it('is not on the Service the edge calls', () => {
    const service = findManifest(manifests, 'Service', 'kinference-scorer')
    const targets = servicePorts(service).map((p) => p.targetPort)
    const epp = ['grpc-epp', 'grpc-health']
    expect(targets.filter((target) => !epp.includes(String(target)))).toEqual(['http'])
    expect(servicePorts(service).map((p) => p.port)).not.toContain(9090)
  })
})

describe('the scorer’s metrics port with ci/cloudflare-values.yaml (ServiceMonitor, metrics peers)', () => {
  let manifests: Manifest[] = []
  beforeAll(async () => {
    manifests = await renderChart({ valuesFile: join(chartDir, 'ci/cloudflare-values.yaml') })
  })

  it('is what the scorer’s ServiceMonitor scrapes, through a Service carrying only it', () => {
    const monitor = findManifest(manifests, 'ServiceMonitor', 'kinference-scorer').spec as {
      selector: { matchLabels: Record<string, string> }
      endpoints: { port: string; path: string }[]
    }
    expect(monitor.endpoints.map(({ port, path }) => ({ port, path }))).toEqual([
      { port: 'metrics', path: '/metrics' },
    ])
    const selected = manifests.filter(
      (m) =>
        m.kind === 'Service' &&
        Object.entries(monitor.selector.matchLabels).every(
          ([key, value]) => m.metadata.labels?.[key] === value,
        ),
    )
    expect(selected.map((m) => m.metadata.name)).toEqual(['kinference-scorer-metrics'])
    const [service] = selected as [Manifest]
    expect((service.spec as { clusterIP: string }).clusterIP).toBe('None')
    expect(servicePorts(service)).toEqual([{ name: 'metrics', port: 9090, targetPort: 'metrics' }])
  })

  it('is the only scorer port the metrics peers reach, and the ingress path never does', () => {
    const policy = findManifest(manifests, 'NetworkPolicy', 'kinference-scorer') as Manifest &
      NetworkPolicy
    const metricsPeer = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
    }
    const rules = policy.spec.ingress ?? []
    expect(rules).toHaveLength(2)
    const toMetrics = rules.filter((rule) => rule.ports?.some((p) => p.port === 9090))
    expect(toMetrics).toEqual([{ from: [metricsPeer], ports: [{ protocol: 'TCP', port: 9090 }] }])
    const toApi = rules.filter((rule) => rule.ports?.some((p) => p.port === 8080))
    expect(toApi).toHaveLength(1)
    expect(toApi[0]?.ports).toEqual([{ protocol: 'TCP', port: 8080 }])
    expect(toApi[0]?.from).not.toContainEqual(metricsPeer)
  })
})

describe('the scorer’s metrics port, set', () => {
  it('follows scorer.metricsPort into the args, the container, the Service and the policy', async () => {
    const manifests = await renderChart({
      valuesFile: join(chartDir, 'ci/cloudflare-values.yaml'),
      set: { 'scorer.metricsPort': 9400 },
    })
    const container = scorerContainer(manifests)
    expect(flag(container.args ?? [], '--metrics-port')).toBe('9400')
    expect(container.ports?.find((p) => p.name === 'metrics')?.containerPort).toBe(9400)
    const service = findManifest(manifests, 'Service', 'kinference-scorer-metrics')
    expect(servicePorts(service)[0]?.port).toBe(9400)
    const policy = findManifest(manifests, 'NetworkPolicy', 'kinference-scorer') as Manifest &
      NetworkPolicy
    expect(policy.spec.ingress?.[1]?.ports).toEqual([{ protocol: 'TCP', port: 9400 }])
  })

  it('is refused when it is the API port (helm template fails)', async () => {
    const result = await templateChart({ set: { 'scorer.metricsPort': 8080 } })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain('scorer.metricsPort (8080) must differ from scorer.port')
  })
})
