import { describe, expect, it } from 'vitest'
import {
  chartDir,
  containersOf,
  findManifest,
  renderChart,
  templateChart,
} from '../../support/helm-chart.ts'

// What users set when the chart's own values do not say it (ci/escape-hatches-values.yaml),
// rendered by the real helm: each lands on the workload it names, and a pod label that
// would redefine one the selectors read is refused.

const valuesFile = `${chartDir}/ci/escape-hatches-values.yaml`

interface PodTemplate {
  metadata: { labels: Record<string, string>; annotations?: Record<string, string> }
  spec: {
    priorityClassName?: string
    tolerations?: unknown[]
    nodeSelector?: unknown
    affinity?: unknown
  }
}

describe('the chart’s escape hatches', () => {
  it('put pod annotations and labels, env, args, the PriorityClass and the scheduling fields on each workload', async () => {
    const manifests = await renderChart({ valuesFile })
    const expected = {
      controller: {
        env: 'NODE_OPTIONS',
        args: ['--debounce', '250ms'],
        priority: 'system-cluster-critical',
      },
      scorer: {
        env: 'UV_THREADPOOL_SIZE',
        args: ['--redis-prefix', 'kinf:'],
        priority: 'high-priority',
      },
      edge: {
        env: 'AWS_REGION',
        args: ['--stream-stall-timeout', '90s'],
        priority: 'high-priority',
      },
    }
    for (const [component, want] of Object.entries(expected)) {
      const deployment = findManifest(manifests, 'Deployment', `kinference-${component}`)
      const template = (deployment.spec as { template: PodTemplate }).template
      expect(template.metadata.annotations).toEqual({ 'example.com/team': 'serving' })
      expect(template.metadata.labels.team).toBe('serving')
      expect(template.metadata.labels['app.kubernetes.io/component']).toBe(component)
      expect(template.spec.priorityClassName).toBe(want.priority)
      // Every workload takes all three scheduling fields.
      expect(template.spec.nodeSelector, component).toEqual({ 'kubernetes.io/os': 'linux' })
      expect(template.spec.tolerations, component).toHaveLength(1)
      expect(template.spec.affinity, component).toMatchObject({
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              podAffinityTerm: {
                labelSelector: { matchLabels: { 'app.kubernetes.io/component': component } },
              },
            },
          ],
        },
      })
      const [container] = containersOf(deployment)
      expect(container?.env?.map((e) => e.name)).toContain(want.env)
      expect(container?.args?.slice(-2)).toEqual(want.args)
    }
  })

  it('annotates the service accounts (IRSA, Workload Identity)', async () => {
    const manifests = await renderChart({ valuesFile })
    const annotations = (name: string) =>
      (findManifest(manifests, 'ServiceAccount', name).metadata as { annotations?: object })
        .annotations
    expect(annotations('kinference-controller')).toEqual({
      'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/kinference-controller',
    })
    expect(annotations('kinference-scorer')).toEqual({
      'iam.gke.io/gcp-service-account': 'kinference@example.iam.gserviceaccount.com',
    })
    // The edge's role gives Bedrock providers their credentials.
    expect(annotations('kinference-edge')).toEqual({
      'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/kinference-edge',
    })
  })

  it('refuses a pod label that would redefine one the selectors read, naming it', async () => {
    const result = await templateChart({
      set: { 'scorer.podLabels.app\\.kubernetes\\.io/component': 'other' },
    })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain('scorer.podLabels.app.kubernetes.io/component')
    const edge = await templateChart({
      set: { 'edge.enabled': 'true', 'edge.podLabels.app\\.kubernetes\\.io/instance': 'x' },
    })
    expect(edge.code).not.toBe(0)
    expect(edge.stderr).toContain('edge.podLabels.app.kubernetes.io/instance')
  })
})
