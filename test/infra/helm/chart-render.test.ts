import { beforeAll, describe, expect, it } from 'vitest'
import { variantValue } from '../../support/chart-variant-values.ts'
import {
  chartVariants,
  containersOf,
  lintChart,
  type Manifest,
  renderChart,
} from '../../support/helm-chart.ts'
import type { Container, Deployment, LabelSelector } from '../../support/manifest-types.ts'

/**
 * The chart's manifests for the default values and each ci/*.yaml, read as kube-linter's
 * default checks and the chart's conventions would: resources, probes, security context,
 * pinned images, selectors that select, Secrets only by reference (but the EPP's
 * certificate the chart may generate). The helm test Pod is held to the same rules.
 */
interface PodManifest {
  kind: 'Pod'
  spec: { securityContext?: { runAsNonRoot?: boolean }; containers: Container[] }
}

const matches = (selector: LabelSelector, labels: Record<string, string>) =>
  Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value)

describe.each(chartVariants)('helm chart with $name', ({ options }) => {
  let manifests: Manifest[] = []
  let deployments: (Manifest & Deployment)[] = []
  let testPods: (Manifest & PodManifest)[] = []
  /** Every container the release runs: its workloads' and its helm test Pod's. */
  const allContainers = () => [
    ...deployments.flatMap(containersOf),
    ...testPods.flatMap((pod) => pod.spec.containers),
  ]
  const edgeOn = variantValue(options, 'edge.enabled') === true
  beforeAll(async () => {
    manifests = await renderChart(options)
    deployments = manifests.filter((m): m is Manifest & Deployment => m.kind === 'Deployment')
    testPods = manifests.filter((m): m is Manifest & PodManifest => m.kind === 'Pod')
  })

  it('passes helm lint --strict', async () => {
    const result = await lintChart(options)
    expect(result.stdout + result.stderr).toContain('0 chart(s) failed')
    expect(result.code).toBe(0)
  })

  it('renders the controller and the scorer, and the edge when edge.enabled', () => {
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
      'kinference-controller',
      ...(edgeOn ? ['kinference-edge'] : []),
      'kinference-scorer',
    ])
    // The helm test Pod checks the edge, so it comes with it.
    expect(testPods.map((p) => p.metadata.name)).toEqual(edgeOn ? ['kinference-edge-test'] : [])
  })

  it('gives every container cpu and memory requests and a memory limit', () => {
    for (const container of allContainers()) {
      expect(container.resources?.requests, container.name).toHaveProperty('cpu')
      expect(container.resources?.requests, container.name).toHaveProperty('memory')
      expect(container.resources?.limits, container.name).toHaveProperty('memory')
    }
  })

  it('probes every container on an HTTP path of a port it declares', () => {
    for (const container of deployments.flatMap(containersOf)) {
      const ports = (container.ports ?? []).map((p) => p.name)
      for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe'] as const) {
        const get = container[probe]?.httpGet
        expect(get?.path, `${container.name} ${probe}`).toMatch(/^\/(healthz|readyz|health)$/)
        expect(ports, `${container.name} ${probe}`).toContain(get?.port)
      }
    }
  })

  it('runs every container as non-root, read-only, without capabilities or escalation', () => {
    const pods = [
      ...deployments.map((d) => ({ ...d.spec.template.spec, name: d.metadata.name })),
      ...testPods.map((p) => ({ ...p.spec, name: p.metadata.name })),
    ]
    for (const pod of pods) {
      expect(pod.securityContext?.runAsNonRoot, pod.name).toBe(true)
      for (const container of pod.containers) {
        expect(container.securityContext, container.name).toMatchObject({
          runAsNonRoot: true,
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          privileged: false,
          capabilities: { drop: ['ALL'] },
        })
        expect(container.securityContext?.capabilities?.add, container.name).toBeUndefined()
      }
    }
  })

  it('pins every image to a tag other than latest', () => {
    for (const container of allContainers()) {
      const tag = /:([^:/]+)$/.exec(container.image)?.[1]
      expect(tag, container.image).toBeDefined()
      expect(tag).not.toBe('latest')
    }
  })

  it('runs each workload as its own rendered ServiceAccount', () => {
    const accounts = manifests
      .filter((m) => m.kind === 'ServiceAccount')
      .map((m) => m.metadata.name)
    const used = deployments.map((d) => d.spec.template.spec.serviceAccountName)
    expect(new Set(used).size).toBe(deployments.length)
    for (const name of used) expect(accounts).toContain(name)
  })

  it('selects pods of exactly one Deployment from every selector of the release', () => {
    for (const deployment of deployments)
      expect(matches(deployment.spec.selector, deployment.spec.template.metadata.labels)).toBe(true)
    const selectors = manifests.flatMap((m) => {
      const spec = m.spec as { selector?: LabelSelector } | undefined
      if (m.kind === 'Service')
        return [{ m, selector: { matchLabels: spec?.selector as Record<string, string> } }]
      if (m.kind === 'PodDisruptionBudget' && spec?.selector)
        return [{ m, selector: spec.selector }]
      return []
    })
    for (const { m, selector } of selectors) {
      const selected = deployments.filter((d) => matches(selector, d.spec.template.metadata.labels))
      expect(selected, `${m.kind}/${m.metadata.name}`).toHaveLength(1)
    }
  })

  it('creates no Secret but the EPP’s generated certificate, and reads every secret value from a Secret reference', () => {
    const generated =
      variantValue(options, 'scorer.epp.enabled') === true &&
      variantValue(options, 'scorer.epp.tls.enabled') === true &&
      variantValue(options, 'scorer.epp.tls.existingSecret') === ''
    const secrets = manifests.filter((m) => m.kind === 'Secret')
    expect(secrets.map((m) => m.metadata.name)).toEqual(
      generated ? ['kinference-scorer-epp-tls'] : [],
    )
    for (const secret of secrets)
      expect((secret as { type?: string }).type).toBe('kubernetes.io/tls')
    const secretEnv = /REDIS_URL|SECRET|TOKEN/
    for (const container of allContainers()) {
      for (const env of container.env ?? []) {
        if (!secretEnv.test(env.name)) continue
        expect(env.value, env.name).toBeUndefined()
        expect(env.valueFrom?.secretKeyRef?.name, env.name).toMatch(/^[a-z0-9]/)
      }
    }
  })
})
