import { CustomObjectsApi } from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import { writeStatus } from '../../../control-plane/controller/status-writer.ts'
import { kinferenceKinds } from '../../../control-plane/controller/watched-kinds.ts'
import { kinference, yamlObjects } from '../../support/controller/controller-fixture.ts'
import { useControllerCluster } from '../../support/controller/use-controller-cluster.ts'

const poolKind = kinferenceKinds.find((kind) => kind.kind === 'InferencePool')
if (!poolKind) throw new Error('no InferencePool kind')

describe('writeStatus', () => {
  const cluster = useControllerCluster(yamlObjects('infra/k8s/examples/platform.yaml'))

  it('retries a 409 with a fresh read and keeps conditions another controller wrote', async () => {
    const { server } = cluster
    const stale = cluster.pool('qwen-27b')
    if (!stale) throw new Error('no pool')
    // Another controller writes its own condition meanwhile: our copy is now stale.
    const theirs = {
      type: 'example.com/Audited',
      status: 'True',
      reason: 'Audited',
      message: '',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    }
    server.objects.update(
      kinference,
      'inferencepools',
      { ...stale, status: { conditions: [theirs] } },
      { subresource: 'status' },
    )
    const api = cluster.kubeConfig().makeApiClient(CustomObjectsApi)
    const seen: unknown[] = []
    const result = await writeStatus({
      api,
      kind: poolKind,
      object: stale as never,
      compute: (existing) => {
        seen.push(existing)
        const conditions = (existing as { conditions?: unknown[] } | undefined)?.conditions ?? []
        return { ...(existing as object), readyPods: 3, conditions }
      },
    })
    expect(result).toBe('written')
    expect(seen).toHaveLength(2)
    expect(server.requests.filter((r) => r.subresource === 'status').map((r) => r.code)).toEqual([
      409, 200, 200,
    ])
    expect(cluster.pool('qwen-27b')?.status).toMatchObject({ readyPods: 3, conditions: [theirs] })
  })

  it('writes nothing when the status already says it all, and tells a deleted resource', async () => {
    const { server } = cluster
    const object = cluster.pool('qwen-27b')
    const api = cluster.kubeConfig().makeApiClient(CustomObjectsApi)
    const unchanged = await writeStatus({
      api,
      kind: poolKind,
      object: object as never,
      compute: () => null,
    })
    expect(unchanged).toBe('unchanged')
    server.objects.delete(kinference, 'inferencepools', 'kinference', 'qwen-27b')
    const gone = await writeStatus({
      api,
      kind: poolKind,
      object: object as never,
      compute: () => ({ readyPods: 1 }),
    })
    expect(gone).toBe('gone')
  })
})
