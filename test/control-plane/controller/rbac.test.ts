import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'
import {
  applyObjects,
  eventually,
  yamlObjects,
} from '../../support/controller/controller-fixture.ts'
import { useControllerCluster } from '../../support/controller/use-controller-cluster.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'

interface Rule {
  apiGroups: string[]
  resources: string[]
  verbs: string[]
}

const rbacFile = 'infra/k8s/rbac/controller-rbac.yaml'
const documents = parseAllDocuments(readFileSync(rbacFile, 'utf8')).map(
  (d) => d.toJS() as { kind: string; rules?: Rule[] },
)
const rules = documents.flatMap((d) =>
  d.kind === 'ClusterRole' || d.kind === 'Role' ? (d.rules ?? []) : [],
)
const granted = (group: string, resource: string, verb: string) =>
  rules.some(
    (r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb),
  )

const { uniquePrefix } = useRedisTestNamespaces()

describe(rbacFile, () => {
  const platform = yamlObjects('infra/k8s/examples/platform.yaml')
  const policy = yamlObjects('infra/k8s/examples/burst-to-bedrock.yaml')
  const cluster = useControllerCluster([...platform, ...policy], { upstreamPools: true })

  it('grants every call the controller makes, and no wildcard', async () => {
    const { server } = cluster
    cluster.addPod('p0', '10.9.0.1')
    cluster.putSlice('s-1', [{ name: 'p0', ip: '10.9.0.1' }])
    // An upstream InferencePool naming the Endpoint Picker: watched, and its status written.
    server.objects.create('inference.networking.k8s.io/v1', 'inferencepools', {
      apiVersion: 'inference.networking.k8s.io/v1',
      kind: 'InferencePool',
      metadata: { name: 'gie', namespace: 'kinference' },
      spec: {
        selector: { matchLabels: { app: 'gie' } },
        targetPorts: [{ number: 8000 }],
        endpointPickerRef: { name: 'epp', port: { number: 9002 } },
      },
    })
    const c = await cluster.start(uniquePrefix(), { eppService: 'epp' })
    try {
      await eventually(() => c.controller.isLeader())
      await eventually(() =>
        server.requests.some(
          (r) =>
            r.resource === 'inferencepools' && r.subresource === 'status' && r.verb === 'update',
        ),
      )
      // A rejected change makes the controller write status and record an Event.
      const broken = structuredClone(policy[0]) as unknown as {
        spec: { rules: { action: { burst: { local: string[] } } }[] }
      }
      const rule = broken.spec.rules[0]
      if (rule) rule.action.burst.local = ['missing']
      applyObjects(server, [broken as never])
      await eventually(() =>
        server.objects.list('v1', 'events', 'kinference').some((e) => e.reason === 'Rejected'),
      )
      await c.controller.idle()
    } finally {
      await cluster.stop(c)
    }
    const calls = new Set(
      server.requests
        .filter((r) => r.token === server.token && r.resource !== undefined && r.verb !== undefined)
        .map(
          (r) =>
            `${r.group ?? ''}|${r.resource}${r.subresource ? `/${r.subresource}` : ''}|${r.verb}`,
        ),
    )
    expect(calls.size).toBeGreaterThan(8)
    const denied = [...calls].filter((call) => {
      const [group, resource, verb] = call.split('|') as [string, string, string]
      return !granted(group, resource, verb)
    })
    expect(denied).toEqual([])
    for (const rule of rules)
      for (const field of [rule.apiGroups, rule.resources, rule.verbs])
        expect(field).not.toContain('*')
    // Lease rights only in a Role of its own namespace, not cluster-wide.
    const clusterRole = documents.find((d) => d.kind === 'ClusterRole')
    expect(clusterRole?.rules?.some((r) => r.resources.includes('leases'))).toBe(false)
  })
})
