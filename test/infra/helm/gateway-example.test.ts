import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'
import {
  chartDir,
  containersOf,
  findManifest,
  type Manifest,
  renderChart,
} from '../../support/helm-chart.ts'
import type { NetworkPolicy } from '../../support/manifest-types.ts'

/**
 * infra/helm/kinference/examples/gateway-inference-pool.yaml: a Gateway, an HTTPRoute to
 * an upstream InferencePool, and that pool naming the scorer as its Endpoint Picker. Its
 * pool obeys the upstream API's field rules, its references meet each other, and, with the
 * chart rendered with the values its header gives, the chart's Service, EPP port,
 * NetworkPolicies and the vLLM example's pods. README.md and docs/deploy.md show the same
 * documents.
 */
const file = join(chartDir, 'examples/gateway-inference-pool.yaml')
const text = readFileSync(file, 'utf8')

interface Doc {
  apiVersion: string
  kind: string
  metadata: { name: string; namespace?: string }
  spec: Record<string, unknown>
}
const parseDocs = (yaml: string) => parseAllDocuments(yaml).map((d) => d.toJS() as Doc)
const docs = parseDocs(text)
const doc = (kind: string) => {
  const found = docs.find((d) => d.kind === kind)
  if (!found) throw new Error(`no ${kind} in ${file}`)
  return found
}

interface UpstreamPoolSpec {
  selector?: { matchLabels?: Record<string, string> } & Record<string, unknown>
  targetPorts?: { number?: unknown }[]
  appProtocol?: string
  endpointPickerRef?: {
    group?: string
    kind?: string
    name?: string
    port?: { number?: unknown }
    failureMode?: string
  }
}
const isPort = (value: unknown) =>
  Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 65_535

/**
 * The field rules of the upstream InferencePool (inference.networking.k8s.io/v1): a
 * selector of 1 to 64 matchLabels only, 1 to 8 distinct target ports, appProtocol http or
 * kubernetes.io/h2c, and an endpointPickerRef whose kind (default Service) needs a port
 * number, with failureMode FailOpen or FailClose (default FailClose).
 */
function upstreamPoolProblems(pool: Doc): string[] {
  const problems: string[] = []
  const spec = pool.spec as UpstreamPoolSpec
  if (pool.apiVersion !== 'inference.networking.k8s.io/v1') problems.push('apiVersion')
  const labels = Object.keys(spec.selector?.matchLabels ?? {})
  if (labels.length < 1 || labels.length > 64) problems.push('selector.matchLabels: 1 to 64')
  if (Object.keys(spec.selector ?? {}).some((key) => key !== 'matchLabels'))
    problems.push('selector: matchLabels only')
  const ports = (spec.targetPorts ?? []).map((p) => p.number)
  if (ports.length < 1 || ports.length > 8) problems.push('targetPorts: 1 to 8')
  if (!ports.every(isPort)) problems.push('targetPorts[].number: a port')
  if (new Set(ports).size !== ports.length) problems.push('targetPorts: distinct numbers')
  if (spec.appProtocol !== undefined && !['http', 'kubernetes.io/h2c'].includes(spec.appProtocol))
    problems.push('appProtocol')
  const ref = spec.endpointPickerRef
  if (ref !== undefined) {
    if (!ref.name) problems.push('endpointPickerRef.name: required')
    if ((ref.kind ?? 'Service') === 'Service' && !isPort(ref.port?.number))
      problems.push('endpointPickerRef.port.number: required for a Service')
    if (!['FailOpen', 'FailClose'].includes(ref.failureMode ?? 'FailClose'))
      problems.push('endpointPickerRef.failureMode')
  }
  return problems
}

/** The `--set` values of the example's header, as helm gets them from the shell. */
const headerSets = Object.fromEntries(
  [...text.matchAll(/--set '?([^=' ]+)=([^' \n]+)'?/g)].map(([, key, value]) => [key, value]),
) as Record<string, string>

describe(file, () => {
  let manifests: Manifest[] = []
  beforeAll(async () => {
    manifests = await renderChart({ set: headerSets })
  })

  it('holds a Gateway, an HTTPRoute and an upstream InferencePool', () => {
    expect(docs.map((d) => `${d.apiVersion} ${d.kind}`)).toEqual([
      'gateway.networking.k8s.io/v1 Gateway',
      'gateway.networking.k8s.io/v1 HTTPRoute',
      'inference.networking.k8s.io/v1 InferencePool',
    ])
    expect(headerSets).toHaveProperty(['scorer.epp.enabled'], 'true')
  })

  it('has an InferencePool the upstream field rules accept, and a checker that refuses bad ones', () => {
    const pool = doc('InferencePool')
    expect(upstreamPoolProblems(pool)).toEqual([])
    const edit = (change: (spec: UpstreamPoolSpec) => void) => {
      const copy = structuredClone(pool)
      change(copy.spec as UpstreamPoolSpec)
      return upstreamPoolProblems(copy)
    }
    expect(edit((s) => delete s.endpointPickerRef?.port)).toEqual([
      'endpointPickerRef.port.number: required for a Service',
    ])
    expect(edit((s) => s.targetPorts?.push({ number: 8000 }))).toEqual([
      'targetPorts: distinct numbers',
    ])
    expect(edit((s) => (s.selector = { matchLabels: {} }))).toEqual([
      'selector.matchLabels: 1 to 64',
    ])
    expect(edit((s) => Object.assign(s.endpointPickerRef ?? {}, { failureMode: 'Open' }))).toEqual([
      'endpointPickerRef.failureMode',
    ])
  })

  it('routes the HTTPRoute from the Gateway, which admits its namespace, to the pool', () => {
    const gateway = doc('Gateway')
    const route = doc('HTTPRoute')
    const pool = doc('InferencePool')
    const spec = route.spec as {
      parentRefs: { name: string; namespace?: string }[]
      rules: { backendRefs: { group: string; kind: string; name: string }[] }[]
    }
    expect(spec.parentRefs).toEqual([
      { name: gateway.metadata.name, namespace: gateway.metadata.namespace },
    ])
    const listener = (gateway.spec.listeners as { allowedRoutes: unknown }[])[0]
    expect(listener?.allowedRoutes).toEqual({
      namespaces: {
        from: 'Selector',
        selector: { matchLabels: { 'kubernetes.io/metadata.name': route.metadata.namespace } },
      },
    })
    // A backendRef names a pool of the route's own namespace.
    expect(pool.metadata.namespace).toBe(route.metadata.namespace)
    expect(spec.rules[0]?.backendRefs).toEqual([
      { group: 'inference.networking.k8s.io', kind: 'InferencePool', name: pool.metadata.name },
    ])
  })

  it('names the chart’s scorer Service and its EPP port, in the release namespace', () => {
    const pool = doc('InferencePool')
    const ref = (pool.spec as UpstreamPoolSpec).endpointPickerRef
    // An endpointPickerRef names a Service of the pool's own namespace: the release's.
    const service = findManifest(manifests, 'Service', ref?.name ?? '')
    expect(service.metadata.namespace).toBe(pool.metadata.namespace)
    const port = (service.spec as { ports: { name: string; port: number }[] }).ports.find(
      (p) => p.port === ref?.port?.number,
    )
    expect(port?.name).toBe('grpc-epp')
    const [scorer] = containersOf(findManifest(manifests, 'Deployment', 'kinference-scorer'))
    expect(scorer?.ports?.find((p) => p.name === 'grpc-epp')).toBeDefined()
    expect(ref?.failureMode).toBe('FailOpen')
  })

  it('selects the vLLM example’s pods on their HTTP port, which the gateway’s proxies may reach', () => {
    const pool = doc('InferencePool').spec as UpstreamPoolSpec
    const vllm = parseDocs(readFileSync(join(chartDir, 'examples/vllm-l40s.yaml'), 'utf8'))
    const deployment = vllm.find((d) => d.kind === 'Deployment') as Doc & {
      spec: {
        template: {
          metadata: { labels: Record<string, string> }
          spec: { containers: { ports: { name: string; containerPort: number }[] }[] }
        }
      }
    }
    const labels = deployment.spec.template.metadata.labels
    for (const [key, value] of Object.entries(pool.selector?.matchLabels ?? {}))
      expect(labels[key], key).toBe(value)
    const http = deployment.spec.template.spec.containers[0]?.ports.find((p) => p.name === 'http')
    expect(pool.targetPorts?.map((p) => p.number)).toEqual([http?.containerPort])
    const gatewayNamespace = doc('Gateway').metadata.namespace
    const peer = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': gatewayNamespace } },
    }
    const vllmPolicy = findManifest(manifests, 'NetworkPolicy', 'kinference-vllm') as Manifest &
      NetworkPolicy
    expect(vllmPolicy.spec.ingress).toContainEqual({
      from: [peer],
      ports: [{ protocol: 'TCP', port: http?.containerPort }],
    })
    const scorerPolicy = findManifest(manifests, 'NetworkPolicy', 'kinference-scorer') as Manifest &
      NetworkPolicy
    expect(scorerPolicy.spec.ingress).toContainEqual({
      from: [peer],
      ports: [
        {
          protocol: 'TCP',
          port: (doc('InferencePool').spec as UpstreamPoolSpec).endpointPickerRef?.port?.number,
        },
        { protocol: 'TCP', port: 9003 },
      ],
    })
  })

  it.each(['README.md', 'docs/deploy.md'])('is what %s shows, with the same helm values', (doc) => {
    const markdown = readFileSync(doc, 'utf8')
    const blocks = [...markdown.matchAll(/```yaml\n([\s\S]*?)```/g)].map(([, yaml]) => yaml ?? '')
    const shown = blocks.filter((yaml) => yaml.includes('inference.networking.k8s.io/v1'))
    expect(shown).toHaveLength(1)
    expect(parseDocs(shown[0] ?? '')).toEqual(docs)
    for (const [key, value] of Object.entries(headerSets))
      expect(markdown, key).toContain(`${key}=${value}`)
  })
})
