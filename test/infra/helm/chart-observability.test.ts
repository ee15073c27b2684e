import { beforeAll, describe, expect, it } from 'vitest'
import { logLevelOfEnv } from '../../../control-plane/logging/log-level-env.ts'
import { parseOtelEnv } from '../../../shared/tracing/otel-env.ts'
import {
  containersOf,
  expandArgs,
  findManifest,
  lintChart,
  type Manifest,
  type RenderOptions,
  renderChart,
  templateChart,
} from '../../support/helm-chart.ts'
import type { Container, NetworkPolicy } from '../../support/manifest-types.ts'

/**
 * The chart's `observability` values: every component's KINFERENCE_LOG_LEVEL, and the
 * standard OTEL_* variables of the edge and the scorer, read back through the services' own
 * parsers (log-level-env.ts, otel-env.ts) from the env the kubelet would build; the
 * scorer's NetworkPolicy egress to the collector; the schema refusing bad values.
 */

const tracingValues: RenderOptions = {
  valuesFile: 'test/fixtures/helm/observability-values.yaml',
  namespace: 'platform',
}
const components = ['controller', 'scorer', 'edge'] as const
const traced = ['scorer', 'edge'] as const

function containerOf(manifests: Manifest[], component: string): Container {
  const [container] = containersOf(findManifest(manifests, 'Deployment', `kinference-${component}`))
  if (!container) throw new Error(`no ${component} container`)
  return container
}

/**
 * A container's env as the kubelet builds it: the downward API's pod name and namespace,
 * Secrets from `secrets` (by variable), and `$(VAR)` in a value expanded from the
 * variables above it.
 */
function kubeletEnv(container: Container, pod: string, secrets: Record<string, string> = {}) {
  const env: Record<string, string> = {}
  for (const variable of container.env ?? []) {
    const field = variable.valueFrom?.fieldRef?.fieldPath
    if (variable.value !== undefined)
      env[variable.name] = expandArgs([variable.value], env)[0] ?? ''
    else if (field === 'metadata.name') env[variable.name] = pod
    else if (field === 'metadata.namespace') env[variable.name] = 'platform'
    else if (variable.valueFrom?.secretKeyRef)
      env[variable.name] = secrets[variable.name] ?? `<${variable.name}>`
  }
  return env
}

const envNames = (container: Container) => (container.env ?? []).map((variable) => variable.name)
const otelNames = (container: Container) =>
  envNames(container).filter((name) => name.startsWith('OTEL_'))

function scorerEgress(manifests: Manifest[]) {
  const policy = findManifest(manifests, 'NetworkPolicy', 'kinference-scorer') as NetworkPolicy
  return policy.spec.egress ?? []
}

describe('the chart’s observability with tracing off (the default)', () => {
  let manifests: Manifest[] = []
  beforeAll(async () => {
    manifests = await renderChart({ set: { 'edge.enabled': 'true' } })
  })

  it('sets no OTEL_* variable on any component, so no service traces', () => {
    for (const component of components) {
      const container = containerOf(manifests, component)
      expect(otelNames(container), component).toEqual([])
      expect(parseOtelEnv(kubeletEnv(container, 'pod-0')), component).toEqual({ enabled: false })
    }
    // The pod identity is there for the resource attributes only (the controller's own use).
    for (const component of traced)
      expect(envNames(containerOf(manifests, component)), component).not.toContain('POD_NAME')
  })

  it('opens no egress for a collector: the scorer reaches vLLM, Redis and DNS alone', () => {
    const ports = scorerEgress(manifests).map((rule) => (rule.ports ?? []).map((p) => p.port))
    expect(ports).toEqual([[8000, 5557, 5558], [6379], [53, 53]])
  })

  it('logs at info on every component', () => {
    for (const component of components) {
      const env = kubeletEnv(containerOf(manifests, component), 'pod-0')
      expect(env.KINFERENCE_LOG_LEVEL, component).toBe('info')
      expect(logLevelOfEnv(env), component).toBe('info')
    }
  })
})

describe('log levels', () => {
  it('give every component observability.logLevel unless its own logLevel says otherwise', async () => {
    const manifests = await renderChart({
      set: {
        'edge.enabled': 'true',
        'observability.logLevel': 'debug',
        'scorer.logLevel': 'error',
      },
    })
    const levels = Object.fromEntries(
      components.map((c) => [c, logLevelOfEnv(kubeletEnv(containerOf(manifests, c), 'pod-0'))]),
    )
    expect(levels).toEqual({ controller: 'debug', scorer: 'error', edge: 'debug' })
  })
})

describe('the chart’s observability with an OTLP endpoint', () => {
  let manifests: Manifest[] = []
  beforeAll(async () => {
    manifests = await renderChart(tracingValues)
  })

  it.each(traced)(
    '%s: exports to the endpoint with the sampler, headers and resource attributes',
    (component) => {
      const env = kubeletEnv(containerOf(manifests, component), `kinference-${component}-7d9f-x2`, {
        OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20s3cret',
      })
      expect(parseOtelEnv(env)).toMatchObject({
        enabled: true,
        url: 'http://otel-collector.observability:4318/v1/traces',
        headers: { authorization: 'Bearer s3cret' },
        sampler: { name: 'parentbased_traceidratio', ratio: 0.25 },
        // Left to the service: kinference-edge or kinference-scorer.
        serviceName: undefined,
        resourceAttributes: {
          'k8s.namespace.name': 'platform',
          'k8s.pod.name': `kinference-${component}-7d9f-x2`,
          'k8s.deployment.name': `kinference-${component}`,
          'deployment.environment.name': 'prod',
          'k8s.cluster.name': 'gpu-east',
        },
      })
    },
  )

  it.each(traced)(
    '%s: reads the headers from the Secret’s `headers` key, never from the values',
    (component) => {
      const headers = containerOf(manifests, component).env?.find(
        (variable) => variable.name === 'OTEL_EXPORTER_OTLP_HEADERS',
      )
      expect(headers).toEqual({
        name: 'OTEL_EXPORTER_OTLP_HEADERS',
        valueFrom: { secretKeyRef: { name: 'otel-auth', key: 'headers' } },
      })
    },
  )

  it('leaves the controller untraced, at the level the values give it', () => {
    const controller = containerOf(manifests, 'controller')
    expect(otelNames(controller)).toEqual([])
    const levels = components.map(
      (c) => kubeletEnv(containerOf(manifests, c), 'p').KINFERENCE_LOG_LEVEL,
    )
    expect(levels).toEqual(['debug', 'debug', 'warn'])
  })

  it('sets no headers without headersSecret, and passes a numeric samplerArg as the ratio', async () => {
    const plain = await renderChart({
      set: {
        'observability.tracing.otlpEndpoint': 'https://otlp.example.com/otlp',
        'observability.tracing.sampler': 'traceidratio',
        'observability.tracing.samplerArg': 0.5,
      },
    })
    const scorer = containerOf(plain, 'scorer')
    expect(otelNames(scorer)).not.toContain('OTEL_EXPORTER_OTLP_HEADERS')
    expect(parseOtelEnv(kubeletEnv(scorer, 'p'))).toMatchObject({
      url: 'https://otlp.example.com/otlp/v1/traces',
      headers: {},
      sampler: { name: 'traceidratio', ratio: 0.5 },
    })
  })

  it('lets the scorer send to the collector’s port on networkPolicy.tracingTo only', () => {
    expect(scorerEgress(manifests)).toContainEqual({
      ports: [{ protocol: 'TCP', port: 4318 }],
      to: [
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'observability' } },
          podSelector: { matchLabels: { 'app.kubernetes.io/name': 'opentelemetry-collector' } },
        },
      ],
    })
    // The edge's egress is not restricted at all (its providers are addresses).
    const edge = findManifest(manifests, 'NetworkPolicy', 'kinference-edge') as NetworkPolicy
    expect(edge.spec.policyTypes).toEqual(['Ingress'])
  })

  it.each([
    { endpoint: 'https://otlp.example.com/otlp', port: 443 },
    { endpoint: 'http://otel-collector', port: 80 },
    { endpoint: 'http://[fd00::1]:4318/', port: 4318 },
    { endpoint: 'https://otlp.example.com:8443', port: 8443 },
  ])(
    'opens $endpoint’s port $port to any destination without tracingTo',
    async ({ endpoint, port }) => {
      const rendered = await renderChart({
        set: { 'observability.tracing.otlpEndpoint': endpoint },
      })
      const egress = scorerEgress(rendered)
      expect(egress).toHaveLength(4)
      expect(egress).toContainEqual({ ports: [{ protocol: 'TCP', port }] })
    },
  )

  it('passes helm lint --strict', async () => {
    const result = await lintChart(tracingValues)
    expect(result.stdout + result.stderr).toContain('0 chart(s) failed')
    expect(result.code).toBe(0)
  })
})

describe('observability values the schema refuses', () => {
  it.each([
    ['observability.logLevel', 'verbose'],
    ['edge.logLevel', 'trace'],
    ['observability.tracing.otlpEndpoint', 'otel-collector:4318'],
    ['observability.tracing.otlpEndpoint', 'grpc://otel-collector:4317'],
    ['observability.tracing.sampler', 'ratio'],
    ['observability.tracing.samplerArg', '2'],
    ['observability.tracing.samplerArg', 'half'],
    ['observability.tracing.headersSecret', 'Otel_Auth'],
    ['observability.tracing.resourceAttributes', 'team'],
  ])('%s: %s', async (key, value) => {
    const result = await templateChart({ set: { [key]: value } })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain(`${key}:`)
    expect(result.stdout).toBe('')
  })

  it('accepts every level the services know', async () => {
    for (const level of ['debug', 'info', 'warn', 'error']) {
      const result = await templateChart({ set: { 'observability.logLevel': level } })
      expect(result.stderr, level).toBe('')
      expect(logLevelOfEnv({ KINFERENCE_LOG_LEVEL: level })).toBe(level)
    }
  })
})
