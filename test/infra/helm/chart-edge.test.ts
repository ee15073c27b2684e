import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  chartDir,
  containersOf,
  findManifest,
  type Manifest,
  renderChart,
  templateChart,
} from '../../support/helm-chart.ts'
import type {
  Container,
  Deployment,
  NetworkPolicy,
  NetworkPolicyPeer,
} from '../../support/manifest-types.ts'

/**
 * The in-cluster edge as rendered (edge.enabled): kinfctl edge's listeners and probes, its
 * Service (the API port only), metrics through a Service and ServiceMonitor of their own,
 * its autoscaler and disruption budget, its signing key, and the NetworkPolicies that let
 * it reach the scorer and let its callers and scrapers reach it. chart-edge-on-api-server
 * runs it; chart-args parses its args; chart-render holds it to the chart's rules.
 */
const gatewayValues = join(chartDir, 'ci/gateway-values.yaml')
const edgeLabels = {
  'app.kubernetes.io/name': 'kinference',
  'app.kubernetes.io/instance': 'kinference',
  'app.kubernetes.io/component': 'edge',
}
const servicePorts = (manifests: Manifest[], name: string) =>
  (findManifest(manifests, 'Service', name).spec as { ports: { name: string; port: number }[] })
    .ports
const edgeOf = (manifests: Manifest[]) => {
  const deployment = findManifest(manifests, 'Deployment', 'kinference-edge') as Manifest &
    Deployment
  return { deployment, container: containersOf(deployment)[0] as Container }
}
const flag = (args: string[], name: string) => args[args.indexOf(name) + 1]
const policy = (manifests: Manifest[], name: string) =>
  findManifest(manifests, 'NetworkPolicy', name) as Manifest & NetworkPolicy

describe('the in-cluster edge with ci/gateway-values.yaml', () => {
  let manifests: Manifest[] = []
  beforeAll(async () => {
    manifests = await renderChart({ valuesFile: gatewayValues })
  })

  it('listens on its API and metrics ports on every address, asking the scorer’s Service', () => {
    const { container } = edgeOf(manifests)
    const args = container.args ?? []
    expect(flag(args, '--host')).toBe('0.0.0.0')
    expect(flag(args, '--port')).toBe('8787')
    expect(flag(args, '--metrics-host')).toBe('0.0.0.0')
    expect(flag(args, '--metrics-port')).toBe('9091')
    expect(flag(args, '--scorer')).toBe('http://kinference-scorer.kinference.svc:8080')
    expect(servicePorts(manifests, 'kinference-scorer').map((p) => p.port)).toContain(8080)
    expect(flag(args, '--config')).toBe('$(REDIS_URL)')
    expect(flag(args, '--config-prefix')).toBe('kinf:')
    expect(container.ports).toEqual([
      { name: 'http', containerPort: 8787, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9091, protocol: 'TCP' },
    ])
  })

  it('probes /healthz on its API port, and drains within its grace period', () => {
    const { deployment, container } = edgeOf(manifests)
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe'] as const)
      expect(container[probe]?.httpGet, probe).toEqual({ path: '/healthz', port: 'http' })
    expect(container.lifecycle?.preStop?.sleep?.seconds).toBe(5)
    const grace = deployment.spec.template.spec.terminationGracePeriodSeconds ?? 0
    expect(flag(container.args ?? [], '--drain-timeout')).toBe(`${grace - 15}s`)
  })

  it('signs with the scorer’s Secret and keeps quotas in the snapshot store’s Redis', () => {
    const { container } = edgeOf(manifests)
    const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.valueFrom]))
    expect(env.KINFERENCE_SIGNING_SECRET).toEqual({
      secretKeyRef: { name: 'kinference-edge-signing', key: 'secrets' },
    })
    expect(env.REDIS_URL).toEqual({ secretKeyRef: { name: 'kinference-redis', key: 'url' } })
    const scorer = containersOf(findManifest(manifests, 'Deployment', 'kinference-scorer'))[0]
    const scorerSigning = scorer?.env?.find((e) => e.name === 'KINFERENCE_SIGNING_SECRETS')
    expect(scorerSigning?.valueFrom).toEqual(env.KINFERENCE_SIGNING_SECRET)
  })

  it('puts only the API port on its Service, and /metrics behind a ServiceMonitor of its own', () => {
    expect(servicePorts(manifests, 'kinference-edge')).toEqual([
      { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' },
    ])
    expect(servicePorts(manifests, 'kinference-edge-metrics')).toEqual([
      { name: 'metrics', port: 9091, targetPort: 'metrics', protocol: 'TCP' },
    ])
    const monitor = findManifest(manifests, 'ServiceMonitor', 'kinference-edge').spec as {
      selector: { matchLabels: Record<string, string> }
      endpoints: { port: string; path: string }[]
    }
    expect(monitor.selector.matchLabels).toEqual({
      ...edgeLabels,
      'kinference.dev/metrics': 'true',
    })
    expect(monitor.endpoints.map(({ port, path }) => ({ port, path }))).toEqual([
      { port: 'metrics', path: '/metrics' },
    ])
  })

  it('scales on CPU with its autoscaler (no replica count on the Deployment) and keeps one through drains', () => {
    const hpa = findManifest(manifests, 'HorizontalPodAutoscaler', 'kinference-edge').spec as {
      scaleTargetRef: unknown
      minReplicas: number
      maxReplicas: number
    }
    expect(hpa.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'kinference-edge',
    })
    expect([hpa.minReplicas, hpa.maxReplicas]).toEqual([3, 12])
    expect(edgeOf(manifests).deployment.spec.replicas).toBeUndefined()
    const pdb = findManifest(manifests, 'PodDisruptionBudget', 'kinference-edge').spec
    expect(pdb).toEqual({ minAvailable: 1, selector: { matchLabels: edgeLabels } })
  })

  it('lets its callers (and the helm test Pod) reach its API port and only the scrapers its metrics', () => {
    const edge = policy(manifests, 'kinference-edge')
    expect(edge.spec.podSelector.matchLabels).toEqual(edgeLabels)
    expect(edge.spec.policyTypes).toEqual(['Ingress'])
    const [api, metrics, ...rest] = edge.spec.ingress ?? []
    const namespace = (name: string): NetworkPolicyPeer => ({
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': name } },
    })
    expect(api).toEqual({
      from: [
        namespace('gateway-system'),
        namespace('ingress-nginx'),
        {
          podSelector: {
            matchLabels: { ...edgeLabels, 'app.kubernetes.io/component': 'edge-test' },
          },
        },
      ],
      ports: [{ protocol: 'TCP', port: 8787 }],
    })
    const testPod = findManifest(manifests, 'Pod', 'kinference-edge-test')
    expect(testPod.metadata.labels?.['app.kubernetes.io/component']).toBe('edge-test')
    expect(metrics).toEqual({
      from: [namespace('monitoring')],
      ports: [{ protocol: 'TCP', port: 9091 }],
    })
    expect(rest).toEqual([])
  })

  it('is let into the scorer’s API port', () => {
    const rules = policy(manifests, 'kinference-scorer').spec.ingress ?? []
    const fromEdge = rules.filter((rule) =>
      rule.from?.some(
        (peer) => peer.podSelector?.matchLabels?.['app.kubernetes.io/component'] === 'edge',
      ),
    )
    expect(fromEdge).toEqual([
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kinference' } },
            podSelector: { matchLabels: edgeLabels },
          },
        ],
        ports: [{ protocol: 'TCP', port: 8080 }],
      },
    ])
  })
})

describe('the in-cluster edge with only edge.enabled', () => {
  let manifests: Manifest[] = []
  beforeAll(async () => {
    manifests = await renderChart({ set: { 'edge.enabled': 'true' } })
  })

  it('runs a fixed number of replicas and no autoscaler, routes or EPP', () => {
    expect(edgeOf(manifests).deployment.spec.replicas).toBe(2)
    const named = (kind: string) =>
      manifests.filter((m) => m.kind === kind).map((m) => m.metadata.name)
    // The scorer's autoscaler (on by default) is the only one.
    expect(named('HorizontalPodAutoscaler')).toEqual(['kinference-scorer'])
    for (const kind of ['HTTPRoute', 'Ingress', 'Secret']) expect(named(kind), kind).toEqual([])
  })

  it('opens its API port to any source (the edge checks API keys) and its metrics to nobody', () => {
    expect(policy(manifests, 'kinference-edge').spec.ingress).toEqual([
      { ports: [{ protocol: 'TCP', port: 8787 }] },
    ])
  })
})

describe('the in-cluster edge’s signing key and the templates’ refusals', () => {
  it('signs with secrets.edgeSigning.edgeKey when set (one secret while the key rotates)', async () => {
    const manifests = await renderChart({
      set: { 'edge.enabled': 'true', 'secrets.edgeSigning.edgeKey': 'current' },
    })
    const env = edgeOf(manifests).container.env?.find((e) => e.name === 'KINFERENCE_SIGNING_SECRET')
    expect(env?.valueFrom?.secretKeyRef).toEqual({
      name: 'kinference-edge-signing',
      key: 'current',
    })
  })

  it('refuses a metrics port that is the API port, and an autoscaler minimum above its maximum', async () => {
    const ports = await templateChart({ set: { 'edge.enabled': 'true', 'edge.metricsPort': 8787 } })
    expect(ports.code).not.toBe(0)
    expect(ports.stderr).toContain('edge.metricsPort (8787) must differ from edge.port')
    const scaling = await templateChart({
      set: {
        'edge.enabled': 'true',
        'edge.autoscaling.enabled': 'true',
        'edge.autoscaling.minReplicas': 20,
      },
    })
    expect(scaling.code).not.toBe(0)
    expect(scaling.stderr).toContain(
      'edge.autoscaling.minReplicas (20) is above edge.autoscaling.maxReplicas (10)',
    )
  })
})
