import { beforeAll, describe, expect, it } from 'vitest'
import {
  chartVariants,
  containersOf,
  lintChart,
  type Manifest,
  renderChart,
} from '../../support/helm-chart.ts'
import type { Deployment, LabelSelector } from '../../support/manifest-types.ts'

/**
 * The chart's manifests for the default values and each ci/*.yaml, read as kube-linter's
 * default checks and the chart's conventions would: resources, probes, security context,
 * pinned images, selectors that select, Secrets only by reference.
 */

const matches = (selector: LabelSelector, labels: Record<string, string>) =>
  Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value)

describe.each(chartVariants)('helm chart with $name', ({ options }) => {
  let manifests: Manifest[] = []
  let deployments: (Manifest & Deployment)[] = []
  beforeAll(async () => {
    manifests = await renderChart(options)
    deployments = manifests.filter((m): m is Manifest & Deployment => m.kind === 'Deployment')
  })

  it('passes helm lint --strict', async () => {
    const result = await lintChart(options)
    expect(result.stdout + result.stderr).toContain('0 chart(s) failed')
    expect(result.code).toBe(0)
  })

  it('renders the controller and the scorer', () => {
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
      'kinference-controller',
      'kinference-scorer',
    ])
  })

  it('gives every container cpu and memory requests and a memory limit', () => {
    for (const container of deployments.flatMap(containersOf)) {
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
    for (const deployment of deployments) {
      expect(deployment.spec.template.spec.securityContext?.runAsNonRoot).toBe(true)
      for (const container of containersOf(deployment)) {
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
    for (const container of deployments.flatMap(containersOf)) {
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

  it('creates no Secret and reads every secret value from a Secret reference', () => {
    expect(manifests.filter((m) => m.kind === 'Secret')).toEqual([])
    const secretEnv = /REDIS_URL|SECRET|TOKEN/
    for (const container of deployments.flatMap(containersOf)) {
      for (const env of container.env ?? []) {
        if (!secretEnv.test(env.name)) continue
        expect(env.value, env.name).toBeUndefined()
        expect(env.valueFrom?.secretKeyRef?.name, env.name).toMatch(/^[a-z0-9]/)
      }
    }
  })
})
