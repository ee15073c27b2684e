import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import {
  examplePool,
  failure,
  group,
  mergePatch,
  namespace,
  type Pool,
  pools,
  useServerWithClient,
  version,
} from './client-node-fixtures.ts'

const api = useServerWithClient()

describe('@kubernetes/client-node CustomObjectsApi', () => {
  it('creates, gets, lists and replaces, with server-owned metadata and CRD defaults', async () => {
    const created = await api.custom.createNamespacedCustomObject({
      ...pools,
      body: examplePool('crud'),
    })
    expect(created.metadata).toMatchObject({ name: 'crud', namespace, generation: 1 })
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/)
    expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(created.spec.failureMode).toBe('FailOpen') // a schema default

    const got = await api.custom.getNamespacedCustomObject({ ...pools, name: 'crud' })
    expect(got).toEqual(created)
    const list = await api.custom.listNamespacedCustomObject(pools)
    expect(list).toMatchObject({ kind: 'InferencePoolList', apiVersion: `${group}/${version}` })
    expect(Number(list.metadata.resourceVersion)).toBeGreaterThanOrEqual(
      Number(created.metadata.resourceVersion),
    )
    expect(list.items.map((p: Pool) => p.metadata?.name)).toContain('crud')
    const everywhere = await api.custom.listClusterCustomObject({
      group,
      version,
      plural: pools.plural,
    })
    expect(everywhere.items.map((p: Pool) => p.metadata?.name)).toContain('crud')

    const changed = { ...got, spec: { ...got.spec, ttftSloMs: 750 } }
    const replaced = await api.custom.replaceNamespacedCustomObject({
      ...pools,
      name: 'crud',
      body: changed,
    })
    expect(replaced.metadata.generation).toBe(2)
    expect(Number(replaced.metadata.resourceVersion)).toBeGreaterThan(
      Number(got.metadata.resourceVersion),
    )
    const stale = await failure(
      api.custom.replaceNamespacedCustomObject({ ...pools, name: 'crud', body: changed }),
    )
    expect(stale.code).toBe(409)
    expect(stale.body).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409 })
  })

  it('answers Status errors: NotFound, AlreadyExists, Invalid, strict unknown fields', async () => {
    const missing = await failure(api.custom.getNamespacedCustomObject({ ...pools, name: 'nope' }))
    expect(missing.body).toMatchObject({ reason: 'NotFound', code: 404, details: { name: 'nope' } })
    await api.custom.createNamespacedCustomObject({ ...pools, body: examplePool('twice') })
    const again = await failure(
      api.custom.createNamespacedCustomObject({ ...pools, body: examplePool('twice') }),
    )
    expect(again.body).toMatchObject({ reason: 'AlreadyExists', code: 409 })
    const badName = await failure(
      api.custom.createNamespacedCustomObject({ ...pools, body: examplePool('Not_A_Name') }),
    )
    expect(badName.body).toMatchObject({ reason: 'Invalid', code: 422 })
    const typo = examplePool('typo')
    typo.spec.tragetPort = 1
    const strict = await failure(
      api.custom.createNamespacedCustomObject({ ...pools, body: typo, fieldValidation: 'Strict' }),
    )
    expect(strict.body.message).toContain('unknown field "spec.tragetPort"')
    const pruned = await api.custom.createNamespacedCustomObject({ ...pools, body: typo })
    expect(pruned.spec).not.toHaveProperty('tragetPort')
    const noRv = await failure(
      api.custom.replaceNamespacedCustomObject({
        ...pools,
        name: 'typo',
        body: examplePool('typo'),
      }),
    )
    expect(noRv.body).toMatchObject({ reason: 'Invalid', code: 422 })
  })

  it('writes status only through /status, by merge patch and by the default JSON patch', async () => {
    const created = await api.custom.createNamespacedCustomObject({
      ...pools,
      body: { ...examplePool('status'), status: { readyPods: 99 } },
    })
    expect(created.status).toBeUndefined() // dropped on create
    const conditions = [
      {
        type: 'Ready',
        status: 'True',
        reason: 'PodsReady',
        message: '',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ]
    const merged = await api.custom.patchNamespacedCustomObjectStatus(
      { ...pools, name: 'status', body: { status: { readyPods: 3, conditions } } },
      mergePatch,
    )
    expect(merged.status.readyPods).toBe(3)
    expect(merged.metadata.generation).toBe(1)
    expect(Number(merged.metadata.resourceVersion)).toBeGreaterThan(
      Number(created.metadata.resourceVersion),
    )

    const jsonPatched = await api.custom.patchNamespacedCustomObjectStatus({
      ...pools,
      name: 'status',
      body: [
        { op: 'test', path: '/status/readyPods', value: 3 },
        { op: 'replace', path: '/status/readyPods', value: 2 },
      ],
    })
    expect(jsonPatched.status.readyPods).toBe(2)
    const sent = api.server.requests.filter((r) => r.subresource === 'status' && r.verb === 'patch')
    expect(sent.map((r) => r.contentType)).toEqual([
      'application/merge-patch+json',
      'application/json-patch+json',
    ])
    const failedTest = await failure(
      api.custom.patchNamespacedCustomObjectStatus({
        ...pools,
        name: 'status',
        body: [{ op: 'test', path: '/status/readyPods', value: 3 }],
      }),
    )
    expect(failedTest.code).toBe(422)

    // The main resource ignores .status; /status ignores everything else.
    const viaMain = await api.custom.patchNamespacedCustomObject(
      { ...pools, name: 'status', body: { status: { readyPods: 7 }, spec: { ttftSloMs: 5 } } },
      mergePatch,
    )
    expect(viaMain.status.readyPods).toBe(2)
    expect(viaMain.metadata.generation).toBe(2)
    const viaStatus = await api.custom.replaceNamespacedCustomObjectStatus({
      ...pools,
      name: 'status',
      body: { ...viaMain, spec: { ...viaMain.spec, ttftSloMs: 1 }, status: { readyPods: 1 } },
    })
    expect(viaStatus.spec.ttftSloMs).toBe(5)
    expect(viaStatus.status).toEqual({ readyPods: 1 })
    expect(viaStatus.metadata.generation).toBe(2)

    const stale = await failure(
      api.custom.replaceNamespacedCustomObjectStatus({ ...pools, name: 'status', body: viaMain }),
    )
    expect(stale.body).toMatchObject({ reason: 'Conflict', code: 409 })
  })

  it('does not store a write that changes nothing (no new resourceVersion, no event)', async () => {
    await api.custom.createNamespacedCustomObject({ ...pools, body: examplePool('same') })
    const body = { status: { readyPods: 1 } }
    const first = await api.custom.patchNamespacedCustomObjectStatus(
      { ...pools, name: 'same', body },
      mergePatch,
    )
    const before = api.server.resourceVersion
    const second = await api.custom.patchNamespacedCustomObjectStatus(
      { ...pools, name: 'same', body },
      mergePatch,
    )
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion)
    expect(api.server.resourceVersion).toBe(before)
    const writes = api.server.requests.filter(
      (r) => r.name === 'same' && r.subresource === 'status',
    )
    expect(writes).toHaveLength(2)
  })

  it('applies server-side (creating when absent) and honours dryRun=All', async () => {
    const apply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply)
    const body = examplePool('applied')
    const created = await api.custom.patchNamespacedCustomObject(
      { ...pools, name: 'applied', body, fieldManager: 'test-controller', force: true },
      apply,
    )
    expect(created.metadata.managedFields).toMatchObject([
      { manager: 'test-controller', operation: 'Apply' },
    ])
    const dry = await api.custom.createNamespacedCustomObject({
      ...pools,
      body: examplePool('dry'),
      dryRun: 'All',
    })
    expect(dry.metadata.name).toBe('dry')
    expect(
      api.server.objects.get(`${group}/${version}`, 'inferencepools', namespace, 'dry'),
    ).toBeUndefined()
  })
})
