import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import {
  chartDir,
  findManifest,
  type Manifest,
  parseManifests,
  renderChart,
  templateChart,
} from '../../support/helm-chart.ts'
import type {
  Deployment,
  LabelSelector,
  NetworkPolicy,
  NetworkPolicyPeer,
  NetworkPolicyPort,
  PolicyRule,
} from '../../support/manifest-types.ts'

/**
 * What the chart grants and opens: the controller's RBAC is exactly the reviewed file's,
 * only the scorer reaches vLLM (in the direction the sockets connect), only the ingress
 * path reaches the scorer, the HPA and PDB hold the scorer, and the CRDs are the repo's.
 */
const rbacFile = 'infra/k8s/rbac/controller-rbac.yaml'
const reviewed = parseManifests(readFileSync(rbacFile, 'utf8'))
const rulesOf = (manifests: Manifest[], kind: string) =>
  manifests.filter((m) => m.kind === kind).flatMap((m) => m.rules as PolicyRule[])
const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8'))
const scorerLabels = {
  'app.kubernetes.io/name': 'kinference',
  'app.kubernetes.io/instance': 'kinference',
  'app.kubernetes.io/component': 'scorer',
}
const portsOf = (rule: { ports?: { port: number }[] }) =>
  (rule.ports ?? []).map((p) => p.port).sort()

describe('the controller RBAC the chart renders', () => {
  let manifests: Manifest[] = []
  beforeAll(async () => {
    manifests = await renderChart({ namespace: 'platform' })
  })

  it('grants exactly the rules of infra/k8s/rbac/controller-rbac.yaml (the upstream pools’ only with scorer.epp)', () => {
    // chart-epp.test.ts checks those with the EPP on.
    const withoutUpstream = rulesOf(reviewed, 'ClusterRole').filter(
      (rule) => !rule.apiGroups.includes('inference.networking.k8s.io'),
    )
    expect(rulesOf(manifests, 'ClusterRole')).toEqual(withoutUpstream)
    expect(rulesOf(manifests, 'Role')).toEqual(rulesOf(reviewed, 'Role'))
    expect(manifests.filter((m) => m.kind.endsWith('Role')).length).toBe(2)
  })

  it('binds them to the controller ServiceAccount in the release namespace, and nothing else', () => {
    const subject = [
      { kind: 'ServiceAccount', name: 'kinference-controller', namespace: 'platform' },
    ]
    for (const kind of ['ClusterRoleBinding', 'RoleBinding']) {
      const bindings = manifests.filter((m) => m.kind === kind)
      expect(bindings).toHaveLength(1)
      expect(bindings[0]?.subjects).toEqual(subject)
    }
    const controller = findManifest(manifests, 'Deployment', 'kinference-controller') as Deployment
    expect(controller.spec.template.spec.serviceAccountName).toBe('kinference-controller')
    const role = findManifest(manifests, 'Role', 'kinference-controller-leader-election')
    expect(role.metadata.namespace).toBe('platform')
  })
})

describe.each([
  { name: 'default values', valuesFile: undefined, vllmNamespace: 'kinference', zmq: [5557, 5558] },
  {
    name: 'ci/cloudflare-values.yaml',
    valuesFile: join(chartDir, 'ci/cloudflare-values.yaml'),
    vllmNamespace: 'vllm',
    zmq: [5556, 5559],
  },
])('NetworkPolicies with $name', ({ valuesFile, vllmNamespace, zmq }) => {
  let policies: NetworkPolicy[] = []
  let manifests: Manifest[] = []
  const policy = (name: string) => {
    const found = policies.find((p) => p.metadata.name === name)
    if (!found) throw new Error(`no NetworkPolicy ${name}`)
    return found
  }
  beforeAll(async () => {
    manifests = await renderChart(valuesFile === undefined ? {} : { valuesFile })
    policies = manifests.filter((m) => m.kind === 'NetworkPolicy') as unknown as NetworkPolicy[]
  })
  const scorerPeer: NetworkPolicyPeer = {
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kinference' } },
    podSelector: { matchLabels: scorerLabels },
  }

  it('lets only the scorer reach the vLLM pods on HTTP and both ZMQ ports', () => {
    const vllm = policy('kinference-vllm')
    expect(vllm.metadata.namespace).toBe(vllmNamespace)
    expect(vllm.spec.policyTypes).toEqual(['Ingress'])
    const [fromScorer, ...others] = vllm.spec.ingress ?? []
    expect(fromScorer?.from).toEqual([scorerPeer])
    expect(portsOf(fromScorer ?? {})).toEqual([8000, ...zmq].sort())
    // Any other peer (metrics scrapers) reaches the HTTP port only.
    for (const rule of others) expect(portsOf(rule)).toEqual([8000])
  })

  it('opens the ZMQ ports as scorer egress (vLLM binds, the scorer connects), never as scorer ingress', () => {
    const scorer = policy('kinference-scorer')
    expect(scorer.spec.policyTypes).toEqual(['Ingress', 'Egress'])
    const toVllm = scorer.spec.egress?.find((rule) => rule.to?.some((peer) => peer.podSelector))
    const vllmPods = findManifest(manifests, 'NetworkPolicy', 'kinference-vllm')
      .spec as NetworkPolicy['spec']
    expect(toVllm?.to).toEqual([
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': vllmNamespace } },
        podSelector: vllmPods.podSelector,
      },
    ])
    expect(portsOf(toVllm ?? {})).toEqual([8000, ...zmq].sort())
    // The ingress path reaches the API port; any other peer (metrics) the metrics port only.
    const [fromIngress, ...others] = scorer.spec.ingress ?? []
    expect(portsOf(fromIngress ?? {})).toEqual([8080])
    for (const rule of others) expect(portsOf(rule)).toEqual([9090])
  })

  it('lets only the configured ingress path (and metrics peers) reach the scorer', () => {
    const scorer = policy('kinference-scorer')
    expect(scorer.spec.podSelector.matchLabels).toEqual(scorerLabels)
    const [fromIngress] = scorer.spec.ingress ?? []
    const configured = valuesFile === undefined ? values.networkPolicy.scorerIngressFrom : undefined
    if (configured) expect(fromIngress?.from).toEqual(configured)
    expect(fromIngress?.from?.length).toBeGreaterThan(0)
  })

  it('leaves the controller open to metrics peers on its probe port only', () => {
    const controller = policy('kinference-controller')
    for (const rule of controller.spec.ingress ?? []) expect(portsOf(rule)).toEqual([8081])
  })
})

describe('NetworkPolicies with data-parallel vLLM (vllm.dataParallelSize 4)', () => {
  const set = { 'vllm.dataParallelSize': 4, 'vllm.kvEventsPort': 5557, 'vllm.replayPort': 5561 }
  let policies: NetworkPolicy[] = []
  beforeAll(async () => {
    const manifests = await renderChart({ set })
    policies = manifests.filter((m) => m.kind === 'NetworkPolicy') as unknown as NetworkPolicy[]
  })
  const rangesOf = (rule?: { ports?: NetworkPolicyPort[] }) =>
    (rule?.ports ?? []).map((p) => [p.port, p.endPort ?? p.port])

  it('opens each rank’s PUB and replay port (port + rank) from the scorer, and the one HTTP port', () => {
    // vLLM offsets both endpoints by the rank (docs/vllm-wire.md §1.2): 5557-5560, 5561-5564.
    const expected = [
      [8000, 8000],
      [5557, 5560],
      [5561, 5564],
    ]
    const vllm = policies.find((p) => p.metadata.name === 'kinference-vllm')
    expect(rangesOf(vllm?.spec.ingress?.[0])).toEqual(expected)
    const scorer = policies.find((p) => p.metadata.name === 'kinference-scorer')
    const toVllm = scorer?.spec.egress?.find((rule) => rule.to?.some((peer) => peer.podSelector))
    expect(rangesOf(toVllm)).toEqual(expected)
  })

  it('refuses ranges that collide (helm template fails)', async () => {
    const overlapping = await templateChart({ set: { ...set, 'vllm.replayPort': 5559 } })
    expect(overlapping.code).not.toBe(0)
    expect(overlapping.stderr).toContain(
      'vllm.kvEventsPort (5557) and vllm.replayPort (5559) overlap across 4 data-parallel ranks',
    )
    const http = await templateChart({ set: { ...set, 'vllm.httpPort': 5563 } })
    expect(http.code).not.toBe(0)
    expect(http.stderr).toContain('vllm.httpPort (5563) is among the KV-event and replay ports')
    // One rank: the default ports 5557 and 5558 sit side by side.
    const single = await templateChart({ set: { 'vllm.dataParallelSize': 1 } })
    expect(single.code).toBe(0)
  })
})

describe('the scorer’s scaling, disruption budget and termination', () => {
  let manifests: Manifest[] = []
  beforeAll(async () => {
    manifests = await renderChart()
  })

  it('points the HorizontalPodAutoscaler at the scorer Deployment', () => {
    const hpa = findManifest(manifests, 'HorizontalPodAutoscaler', 'kinference-scorer')
    expect(hpa.apiVersion).toBe('autoscaling/v2')
    expect((hpa.spec as { scaleTargetRef: unknown }).scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'kinference-scorer',
    })
    // The HPA owns the replica count: the Deployment must not fight it.
    const scorer = findManifest(manifests, 'Deployment', 'kinference-scorer') as Deployment
    expect(scorer.spec.replicas).toBeUndefined()
  })

  it('holds scorer pods (and only them) in the scorer PodDisruptionBudget', () => {
    const pdb = findManifest(manifests, 'PodDisruptionBudget', 'kinference-scorer')
    expect(pdb.apiVersion).toBe('policy/v1')
    expect((pdb.spec as { selector: unknown }).selector).toEqual({ matchLabels: scorerLabels })
  })

  it('drains on SIGTERM within the grace period, after a short preStop sleep', () => {
    const scorer = findManifest(manifests, 'Deployment', 'kinference-scorer') as Deployment
    const pod = scorer.spec.template.spec
    const container = pod.containers[0]
    const sleep = container?.lifecycle?.preStop?.sleep?.seconds ?? 0
    const args = container?.args ?? []
    const drain = args[args.indexOf('--drain-timeout') + 1]
    expect(sleep).toBe(5)
    expect(drain).toBe(`${values.scorer.terminationGracePeriodSeconds - 15}s`)
    expect(pod.terminationGracePeriodSeconds).toBe(values.scorer.terminationGracePeriodSeconds)
  })
})

describe('what a schema cannot check, the templates refuse', () => {
  it('an autoscaler whose minimum is above its maximum (helm template fails; lint only reports it)', async () => {
    const result = await templateChart({ set: { 'scorer.autoscaling.minReplicas': 9 } })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain(
      'scorer.autoscaling.minReplicas (9) is above scorer.autoscaling.maxReplicas (8)',
    )
  })
})

describe('the ServiceMonitors of ci/cloudflare-values.yaml', () => {
  it('each select one Service of the release, by a port it names, with the extra labels', async () => {
    const manifests = await renderChart({ valuesFile: join(chartDir, 'ci/cloudflare-values.yaml') })
    const monitors = manifests.filter((m) => m.kind === 'ServiceMonitor')
    expect(monitors.map((m) => m.metadata.name).sort()).toEqual([
      'kinference-controller',
      'kinference-scorer',
    ])
    const services = manifests.filter((m) => m.kind === 'Service')
    for (const monitor of monitors) {
      const spec = monitor.spec as { selector: LabelSelector; endpoints: { port: string }[] }
      const selected = services.filter((service) =>
        Object.entries(spec.selector.matchLabels ?? {}).every(
          ([key, value]) => service.metadata.labels?.[key] === value,
        ),
      )
      expect(selected, monitor.metadata.name).toHaveLength(1)
      const service = selected[0]?.spec as { ports: { name: string }[] } | undefined
      const portNames = (service?.ports ?? []).map((p) => p.name)
      for (const endpoint of spec.endpoints) expect(portNames).toContain(endpoint.port)
      expect(monitor.metadata.labels?.release).toBe('kube-prometheus-stack')
    }
  })
})

describe('the chart’s CRDs', () => {
  it('are byte for byte the ones in infra/k8s/crds (kinfctl crds writes both)', () => {
    const names = (dir: string) =>
      readdirSync(dir)
        .filter((n) => n.endsWith('.yaml'))
        .sort()
    expect(names(join(chartDir, 'crds'))).toEqual(names('infra/k8s/crds'))
    for (const name of names('infra/k8s/crds'))
      expect(readFileSync(join(chartDir, 'crds', name), 'utf8'), name).toBe(
        readFileSync(join('infra/k8s/crds', name), 'utf8'),
      )
  })
})
