import { createPrivateKey, X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  chartDir,
  containersOf,
  findManifest,
  type Manifest,
  parseManifests,
  renderChart,
  templateChart,
} from '../../support/helm-chart.ts'
import type {
  Container,
  NetworkPolicy,
  NetworkPolicyPeer,
  PodSpec,
  PolicyRule,
} from '../../support/manifest-types.ts'

/**
 * The scorer as a gateway's Endpoint Picker (scorer.epp), as rendered: the kinfctl scorer
 * flags, the named port on the container and the Service, the TLS Secret (generated, or
 * the user's) mounted read-only, the probes the kubelet can run, the controller's
 * --epp-service and its RBAC on the upstream InferencePools, and the NetworkPolicies that
 * let the gateway's proxies reach the EPP and the vLLM pods. chart-args.test.ts parses the
 * flags; chart-epp-on-api-server.test.ts runs the rendered scorer and controller with them.
 */
const gatewayValues = join(chartDir, 'ci/gateway-values.yaml')
const gatewayPeer: NetworkPolicyPeer = {
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'istio-system' } },
}
const tlsDir = '/etc/kinference/epp-tls'

interface GrpcProbe {
  grpc?: { port: number; service?: string }
  httpGet?: { path: string; port: string | number }
}
type EppContainer = Omit<Container, 'readinessProbe' | 'livenessProbe' | 'startupProbe'> & {
  readinessProbe?: GrpcProbe
  livenessProbe?: GrpcProbe
  startupProbe?: GrpcProbe
}
interface ServiceSpec {
  ports: { name: string; port: number; targetPort: string; appProtocol?: string }[]
}
interface SecretVolume {
  name: string
  secret?: { secretName: string; defaultMode?: number }
}

const scorerOf = (manifests: Manifest[]) => {
  const deployment = findManifest(manifests, 'Deployment', 'kinference-scorer')
  const pod = (deployment.spec as { template: { spec: PodSpec } }).template.spec
  return {
    container: containersOf(deployment)[0] as EppContainer,
    volumes: (pod.volumes ?? []) as SecretVolume[],
  }
}
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
const argsAfter = (args: string[], flag: string) => args[args.indexOf(flag) + 1]
const policy = (manifests: Manifest[], name: string) =>
  findManifest(manifests, 'NetworkPolicy', name) as Manifest & NetworkPolicy

describe('the EPP with ci/gateway-values.yaml (TLS with the certificate the chart generates)', () => {
  let manifests: Manifest[] = []
  beforeAll(async () => {
    manifests = await renderChart({ valuesFile: gatewayValues })
  })

  it('runs kinfctl scorer with --epp-port, --epp-host and the mounted certificate and key', () => {
    const args = scorerOf(manifests).container.args ?? []
    const from = args.indexOf('--epp-port')
    expect(args.slice(from, from + 10)).toEqual([
      '--epp-port',
      '9002',
      '--epp-host',
      '0.0.0.0',
      '--epp-health-port',
      '9003',
      '--epp-tls-cert',
      `${tlsDir}/tls.crt`,
      '--epp-tls-key',
      `${tlsDir}/tls.key`,
    ])
  })

  it('serves the EPP’s gRPC health alone in clear text on grpc-health (9003), for checks without TLS', () => {
    const { container } = scorerOf(manifests)
    expect(container.ports).toContainEqual({
      name: 'grpc-health',
      containerPort: 9003,
      protocol: 'TCP',
    })
    const service = findManifest(manifests, 'Service', 'kinference-scorer').spec as ServiceSpec
    expect(service.ports.find((p) => p.name === 'grpc-health')).toEqual({
      name: 'grpc-health',
      port: 9003,
      targetPort: 'grpc-health',
      protocol: 'TCP',
      appProtocol: 'kubernetes.io/h2c',
    })
  })

  it('names the port grpc-epp on the container and on the scorer Service, as HTTP/2 over TLS', () => {
    const { container } = scorerOf(manifests)
    expect(container.ports).toContainEqual({
      name: 'grpc-epp',
      containerPort: 9002,
      protocol: 'TCP',
    })
    const service = findManifest(manifests, 'Service', 'kinference-scorer').spec as ServiceSpec
    expect(service.ports.find((p) => p.name === 'grpc-epp')).toEqual({
      name: 'grpc-epp',
      port: 9002,
      targetPort: 'grpc-epp',
      protocol: 'TCP',
      appProtocol: 'http2',
    })
  })

  it('generates a self-signed certificate for the scorer Service’s names, and its key', () => {
    const secret = findManifest(manifests, 'Secret', 'kinference-scorer-epp-tls') as Manifest & {
      type: string
      data: Record<string, string>
    }
    expect(secret.type).toBe('kubernetes.io/tls')
    const decode = (key: string) => Buffer.from(secret.data[key] ?? '', 'base64').toString('utf8')
    const certificate = new X509Certificate(decode('tls.crt'))
    expect(certificate.checkPrivateKey(createPrivateKey(decode('tls.key')))).toBe(true)
    for (const name of ['kinference-scorer', 'kinference-scorer.kinference.svc'])
      expect(certificate.checkHost(name), name).toBe(name)
    // Gateways do not verify it, but an expired one fails some TLS stacks outright.
    const years = (Date.parse(certificate.validTo) - Date.parse(certificate.validFrom)) / 3.156e10
    expect(years).toBeGreaterThan(9)
  })

  it('mounts that Secret read-only where the flags point', () => {
    const { container, volumes } = scorerOf(manifests)
    expect(volumes).toContainEqual({
      name: 'epp-tls',
      secret: { secretName: 'kinference-scorer-epp-tls', defaultMode: 0o440 },
    })
    expect(container.volumeMounts).toContainEqual({
      name: 'epp-tls',
      mountPath: tlsDir,
      readOnly: true,
    })
  })

  it('keeps the HTTP probes: the kubelet’s gRPC probe cannot speak TLS', () => {
    const { container } = scorerOf(manifests)
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe'] as const) {
      expect(container[probe]?.grpc, probe).toBeUndefined()
      expect(container[probe]?.httpGet, probe).toEqual({ path: '/health', port: 'metrics' })
    }
  })

  it('passes --epp-service with the scorer Service’s name to the controller', () => {
    const args = containersOf(findManifest(manifests, 'Deployment', 'kinference-controller'))[0]
      ?.args
    expect(argsAfter(args ?? [], '--epp-service')).toBe('kinference-scorer')
  })

  it('grants the controller the reviewed rules, those on the upstream InferencePools included', () => {
    const reviewed = parseManifests(readFileSync('infra/k8s/rbac/controller-rbac.yaml', 'utf8'))
    const rules = (from: Manifest[]) =>
      from.filter((m) => m.kind === 'ClusterRole').flatMap((m) => m.rules as PolicyRule[])
    const upstream: PolicyRule[] = [
      {
        apiGroups: ['inference.networking.k8s.io'],
        resources: ['inferencepools'],
        verbs: ['get', 'list', 'watch'],
      },
      {
        apiGroups: ['inference.networking.k8s.io'],
        resources: ['inferencepools/status'],
        verbs: ['get', 'update'],
      },
    ]
    // Exactly the reviewed file's rules, which include them (chart-policies.test.ts: the
    // chart leaves them out without the EPP).
    expect(rules(manifests)).toEqual(rules(reviewed))
    expect(rules(manifests)).toEqual(expect.arrayContaining(upstream))
  })

  it('lets the gateway’s proxies reach the EPP port of the scorer, and nothing else of it', () => {
    const rules = policy(manifests, 'kinference-scorer').spec.ingress ?? []
    const fromGateway = rules.filter((rule) => sameJson(rule.from, [gatewayPeer]))
    expect(fromGateway).toEqual([
      {
        from: [gatewayPeer],
        ports: [
          { protocol: 'TCP', port: 9002 },
          { protocol: 'TCP', port: 9003 },
        ],
      },
    ])
    // No other peer reaches the EPP port.
    const toEpp = rules.filter((rule) => rule.ports?.some((p) => p.port === 9002))
    expect(toEpp).toHaveLength(1)
  })

  it('lets the gateway’s proxies reach the vLLM pods’ HTTP port, where they send what the EPP picked', () => {
    const rules = policy(manifests, 'kinference-vllm').spec.ingress ?? []
    const fromGateway = rules.filter((rule) => sameJson(rule.from, [gatewayPeer]))
    expect(fromGateway).toEqual([{ from: [gatewayPeer], ports: [{ protocol: 'TCP', port: 8000 }] }])
  })
})

describe('the EPP in clear text (scorer.epp.tls.enabled false)', () => {
  let manifests: Manifest[] = []
  beforeAll(async () => {
    manifests = await renderChart({
      valuesFile: gatewayValues,
      set: { 'scorer.epp.tls.enabled': 'false' },
    })
  })

  it('serves h2c without certificate flags, Secret or mount', () => {
    const { container, volumes } = scorerOf(manifests)
    const args = container.args ?? []
    expect(argsAfter(args, '--epp-port')).toBe('9002')
    expect(args.filter((arg) => arg.startsWith('--epp-tls'))).toEqual([])
    expect(manifests.filter((m) => m.kind === 'Secret')).toEqual([])
    expect(volumes.map((v) => v.name)).not.toContain('epp-tls')
    const service = findManifest(manifests, 'Service', 'kinference-scorer').spec as ServiceSpec
    expect(service.ports.find((p) => p.name === 'grpc-epp')?.appProtocol).toBe('kubernetes.io/h2c')
  })

  it('asks the EPP’s gRPC health service for readiness; liveness stays on /health', () => {
    const { container } = scorerOf(manifests)
    expect(container.readinessProbe?.grpc).toEqual({ port: 9002, service: 'readiness' })
    expect(container.readinessProbe?.httpGet).toBeUndefined()
    // Never liveness on the picker's readiness: a pod that cannot pick yet is not dead.
    expect(container.livenessProbe?.httpGet).toEqual({ path: '/health', port: 'metrics' })
    expect(container.startupProbe?.httpGet).toEqual({ path: '/health', port: 'metrics' })
  })
})

describe('the EPP with a certificate of the user’s (ci/escape-hatches-values.yaml)', () => {
  it('mounts that Secret, creates none, and follows scorer.epp.port everywhere', async () => {
    const manifests = await renderChart({
      valuesFile: join(chartDir, 'ci/escape-hatches-values.yaml'),
    })
    expect(manifests.filter((m) => m.kind === 'Secret')).toEqual([])
    const { container, volumes } = scorerOf(manifests)
    expect(volumes.find((v) => v.name === 'epp-tls')?.secret?.secretName).toBe('scorer-epp-cert')
    expect(argsAfter(container.args ?? [], '--epp-port')).toBe('9443')
    expect(container.ports?.find((p) => p.name === 'grpc-epp')?.containerPort).toBe(9443)
    const service = findManifest(manifests, 'Service', 'kinference-scorer').spec as ServiceSpec
    expect(service.ports.find((p) => p.name === 'grpc-epp')?.port).toBe(9443)
    const toEpp = (policy(manifests, 'kinference-scorer').spec.ingress ?? []).filter((rule) =>
      rule.ports?.some((p) => p.port === 9443),
    )
    expect(toEpp).toHaveLength(1)
  })
})

describe('the EPP off (the default)', () => {
  it('adds no port, flag, Secret, controller flag or RBAC rule', async () => {
    const manifests = await renderChart()
    const { container } = scorerOf(manifests)
    expect((container.args ?? []).filter((arg) => arg.startsWith('--epp'))).toEqual([])
    expect(container.ports?.map((p) => p.name)).not.toContain('grpc-epp')
    const controller = containersOf(findManifest(manifests, 'Deployment', 'kinference-controller'))
    expect(controller[0]?.args).not.toContain('--epp-service')
    const groups = manifests
      .filter((m) => m.kind === 'ClusterRole')
      .flatMap((m) => (m.rules as PolicyRule[]).flatMap((rule) => rule.apiGroups))
    expect(groups).not.toContain('inference.networking.k8s.io')
  })
})

describe('what the templates refuse with the EPP on', () => {
  const on = { 'scorer.epp.enabled': 'true' }
  it('no gateway peers while the NetworkPolicies are enforced', async () => {
    const result = await templateChart({ set: on })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain(
      'networkPolicy.gatewayFrom is empty while scorer.epp is enabled',
    )
    const withoutPolicies = await templateChart({
      set: { ...on, 'networkPolicy.enabled': 'false' },
    })
    expect(withoutPolicies.code).toBe(0)
  })

  it('an EPP port that is the API or the metrics port', async () => {
    const base = { ...on, 'networkPolicy.enabled': 'false' }
    const api = await templateChart({ set: { ...base, 'scorer.epp.port': 8080 } })
    expect(api.code).not.toBe(0)
    expect(api.stderr).toContain('scorer.epp.port (8080) must differ from scorer.port')
    const metrics = await templateChart({ set: { ...base, 'scorer.epp.port': 9090 } })
    expect(metrics.code).not.toBe(0)
    expect(metrics.stderr).toContain('scorer.epp.port (9090) must differ from scorer.metricsPort')
  })
})
