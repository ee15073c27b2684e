import { readFileSync } from 'node:fs'
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  KubeConfig,
  type KubernetesObject,
  ListWatch,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  Watch,
} from '@kubernetes/client-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'
import { type KubeApiServer, startKubeApiServer } from './start-kube-api-server.ts'

const group = 'kinference.dev'
const version = 'v1alpha1'
const namespace = 'kinference'
const pools = { group, version, namespace, plural: 'inferencepools' }
const poolsPath = `/apis/${group}/${version}/namespaces/${namespace}/inferencepools`
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch)

type Pool = KubernetesObject & { spec: Record<string, any>; status?: Record<string, any> }

/** The platform example's first InferencePool, renamed. */
function examplePool(name: string): Pool {
  const [doc] = parseAllDocuments(readFileSync('infra/k8s/examples/platform.yaml', 'utf8'))
  const pool = doc?.toJS() as Pool
  return { ...pool, metadata: { name, namespace } }
}

async function failure(promise: Promise<unknown>): Promise<{ code: number; body: any }> {
  try {
    await promise
  } catch (error) {
    if (!(error instanceof ApiException)) throw error
    const body = typeof error.body === 'string' ? JSON.parse(error.body) : error.body
    return { code: error.code, body }
  }
  throw new Error('the request succeeded')
}

async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

let server: KubeApiServer
let kc: KubeConfig
let custom: CustomObjectsApi

beforeAll(async () => {
  server = await startKubeApiServer({
    namespaces: ['default', namespace],
    crds: ['infra/k8s/crds'],
    bookmarkIntervalMs: 100,
  })
  kc = new KubeConfig()
  kc.loadFromFile(server.kubeconfigPath)
  custom = kc.makeApiClient(CustomObjectsApi)
})

afterAll(async () => {
  await server?.close()
})

describe('@kubernetes/client-node CustomObjectsApi', () => {
  it('creates, gets, lists and replaces, with server-owned metadata and CRD defaults', async () => {
    const created = await custom.createNamespacedCustomObject({
      ...pools,
      body: examplePool('crud'),
    })
    expect(created.metadata).toMatchObject({ name: 'crud', namespace, generation: 1 })
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/)
    expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(created.spec.failureMode).toBe('FailOpen') // a schema default

    const got = await custom.getNamespacedCustomObject({ ...pools, name: 'crud' })
    expect(got).toEqual(created)
    const list = await custom.listNamespacedCustomObject(pools)
    expect(list).toMatchObject({ kind: 'InferencePoolList', apiVersion: `${group}/${version}` })
    expect(Number(list.metadata.resourceVersion)).toBeGreaterThanOrEqual(
      Number(created.metadata.resourceVersion),
    )
    expect(list.items.map((p: Pool) => p.metadata?.name)).toContain('crud')
    const everywhere = await custom.listClusterCustomObject({
      group,
      version,
      plural: pools.plural,
    })
    expect(everywhere.items.map((p: Pool) => p.metadata?.name)).toContain('crud')

    const changed = { ...got, spec: { ...got.spec, ttftSloMs: 750 } }
    const replaced = await custom.replaceNamespacedCustomObject({
      ...pools,
      name: 'crud',
      body: changed,
    })
    expect(replaced.metadata.generation).toBe(2)
    expect(Number(replaced.metadata.resourceVersion)).toBeGreaterThan(
      Number(got.metadata.resourceVersion),
    )
    const stale = await failure(
      custom.replaceNamespacedCustomObject({ ...pools, name: 'crud', body: changed }),
    )
    expect(stale.code).toBe(409)
    expect(stale.body).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409 })
  })

  it('answers Status errors: NotFound, AlreadyExists, Invalid, strict unknown fields', async () => {
    const missing = await failure(custom.getNamespacedCustomObject({ ...pools, name: 'nope' }))
    expect(missing.body).toMatchObject({ reason: 'NotFound', code: 404, details: { name: 'nope' } })
    await custom.createNamespacedCustomObject({ ...pools, body: examplePool('twice') })
    const again = await failure(
      custom.createNamespacedCustomObject({ ...pools, body: examplePool('twice') }),
    )
    expect(again.body).toMatchObject({ reason: 'AlreadyExists', code: 409 })
    const badName = await failure(
      custom.createNamespacedCustomObject({ ...pools, body: examplePool('Not_A_Name') }),
    )
    expect(badName.body).toMatchObject({ reason: 'Invalid', code: 422 })
    const typo = examplePool('typo')
    typo.spec.tragetPort = 1
    const strict = await failure(
      custom.createNamespacedCustomObject({ ...pools, body: typo, fieldValidation: 'Strict' }),
    )
    expect(strict.body.message).toContain('unknown field "spec.tragetPort"')
    const pruned = await custom.createNamespacedCustomObject({ ...pools, body: typo })
    expect(pruned.spec).not.toHaveProperty('tragetPort')
    const noRv = await failure(
      custom.replaceNamespacedCustomObject({ ...pools, name: 'typo', body: examplePool('typo') }),
    )
    expect(noRv.body).toMatchObject({ reason: 'Invalid', code: 422 })
  })

  it('writes status only through /status, by merge patch and by the default JSON patch', async () => {
    const created = await custom.createNamespacedCustomObject({
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
    const merged = await custom.patchNamespacedCustomObjectStatus(
      { ...pools, name: 'status', body: { status: { readyPods: 3, conditions } } },
      mergePatch,
    )
    expect(merged.status.readyPods).toBe(3)
    expect(merged.metadata.generation).toBe(1)
    expect(Number(merged.metadata.resourceVersion)).toBeGreaterThan(
      Number(created.metadata.resourceVersion),
    )

    const jsonPatched = await custom.patchNamespacedCustomObjectStatus({
      ...pools,
      name: 'status',
      body: [
        { op: 'test', path: '/status/readyPods', value: 3 },
        { op: 'replace', path: '/status/readyPods', value: 2 },
      ],
    })
    expect(jsonPatched.status.readyPods).toBe(2)
    const sent = server.requests.filter((r) => r.subresource === 'status' && r.verb === 'patch')
    expect(sent.map((r) => r.contentType)).toEqual([
      'application/merge-patch+json',
      'application/json-patch+json',
    ])
    const failedTest = await failure(
      custom.patchNamespacedCustomObjectStatus({
        ...pools,
        name: 'status',
        body: [{ op: 'test', path: '/status/readyPods', value: 3 }],
      }),
    )
    expect(failedTest.code).toBe(422)

    // The main resource ignores .status; /status ignores everything else.
    const viaMain = await custom.patchNamespacedCustomObject(
      { ...pools, name: 'status', body: { status: { readyPods: 7 }, spec: { ttftSloMs: 5 } } },
      mergePatch,
    )
    expect(viaMain.status.readyPods).toBe(2)
    expect(viaMain.metadata.generation).toBe(2)
    const viaStatus = await custom.replaceNamespacedCustomObjectStatus({
      ...pools,
      name: 'status',
      body: { ...viaMain, spec: { ...viaMain.spec, ttftSloMs: 1 }, status: { readyPods: 1 } },
    })
    expect(viaStatus.spec.ttftSloMs).toBe(5)
    expect(viaStatus.status).toEqual({ readyPods: 1 })
    expect(viaStatus.metadata.generation).toBe(2)

    const stale = await failure(
      custom.replaceNamespacedCustomObjectStatus({ ...pools, name: 'status', body: viaMain }),
    )
    expect(stale.body).toMatchObject({ reason: 'Conflict', code: 409 })
  })

  it('does not store a write that changes nothing (no new resourceVersion, no event)', async () => {
    await custom.createNamespacedCustomObject({ ...pools, body: examplePool('same') })
    const body = { status: { readyPods: 1 } }
    const first = await custom.patchNamespacedCustomObjectStatus(
      { ...pools, name: 'same', body },
      mergePatch,
    )
    const before = server.resourceVersion
    const second = await custom.patchNamespacedCustomObjectStatus(
      { ...pools, name: 'same', body },
      mergePatch,
    )
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion)
    expect(server.resourceVersion).toBe(before)
    const writes = server.requests.filter((r) => r.name === 'same' && r.subresource === 'status')
    expect(writes).toHaveLength(2)
  })

  it('applies server-side (creating when absent) and honours dryRun=All', async () => {
    const apply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply)
    const body = examplePool('applied')
    const created = await custom.patchNamespacedCustomObject(
      { ...pools, name: 'applied', body, fieldManager: 'test-controller', force: true },
      apply,
    )
    expect(created.metadata.managedFields).toMatchObject([
      { manager: 'test-controller', operation: 'Apply' },
    ])
    const dry = await custom.createNamespacedCustomObject({
      ...pools,
      body: examplePool('dry'),
      dryRun: 'All',
    })
    expect(dry.metadata.name).toBe('dry')
    expect(
      server.objects.get(`${group}/${version}`, 'inferencepools', namespace, 'dry'),
    ).toBeUndefined()
  })
})

describe('@kubernetes/client-node built-in APIs', () => {
  it('creates and replaces Leases, with 409 on a stale resourceVersion', async () => {
    const leases = kc.makeApiClient(CoordinationV1Api)
    const now = new Date()
    const lease = await leases.createNamespacedLease({
      namespace,
      body: {
        metadata: { name: 'kinference-controller' },
        spec: { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: now, renewTime: now },
      },
    })
    expect(lease.spec?.holderIdentity).toBe('a')
    const renewed = await leases.replaceNamespacedLease({
      namespace,
      name: 'kinference-controller',
      body: { ...lease, spec: { ...lease.spec, renewTime: new Date(now.getTime() + 2_000) } },
    })
    expect(renewed.metadata?.resourceVersion).not.toBe(lease.metadata?.resourceVersion)
    const stolen = await failure(
      leases.replaceNamespacedLease({
        namespace,
        name: 'kinference-controller',
        body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } },
      }),
    )
    expect(stolen.code).toBe(409)
  })

  it('lists EndpointSlices and Pods by label selector, and creates Events', async () => {
    const discovery = kc.makeApiClient(DiscoveryV1Api)
    const core = kc.makeApiClient(CoreV1Api)
    for (const service of ['vllm', 'other']) {
      await discovery.createNamespacedEndpointSlice({
        namespace,
        body: {
          metadata: { name: `${service}-abc`, labels: { 'kubernetes.io/service-name': service } },
          addressType: 'IPv4',
          endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
          ports: [{ name: 'http', port: 8000 }],
        },
      })
    }
    const slices = await discovery.listNamespacedEndpointSlice({
      namespace,
      labelSelector: 'kubernetes.io/service-name=vllm',
    })
    expect(slices.items.map((s) => s.metadata?.name)).toEqual(['vllm-abc'])

    for (const [name, app] of [
      ['p1', 'a'],
      ['p2', 'b'],
      ['p3', 'c'],
    ] as const) {
      await core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name, labels: { app } },
          spec: { containers: [{ name: 'c', image: 'vllm' }] },
        },
      })
    }
    const pod = await core.readNamespacedPod({ namespace, name: 'p1' })
    expect(pod.status?.phase).toBe('Pending')
    const names = async (labelSelector: string) =>
      (await core.listNamespacedPod({ namespace, labelSelector })).items.map(
        (p) => p.metadata?.name,
      )
    expect(await names('app in (a,b)')).toEqual(['p1', 'p2'])
    expect(await names('app notin (a),app')).toEqual(['p2', 'p3'])
    expect(await names('app!=c')).toEqual(['p1', 'p2'])
    expect(await names('!app')).toEqual([])
    const byField = await core.listNamespacedPod({ namespace, fieldSelector: 'metadata.name=p3' })
    expect(byField.items).toHaveLength(1)

    const event = await core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { generateName: 'crud.' },
        involvedObject: { kind: 'InferencePool', name: 'crud', namespace },
        reason: 'Reconciled',
        message: 'ok',
        type: 'Normal',
      },
    })
    expect(event.metadata?.name).toMatch(/^crud\.[a-z0-9]{5}$/)
  })

  it('reads Secrets, with stringData turned into data', async () => {
    server.objects.create('v1', 'secrets', {
      metadata: { name: 'signing', namespace },
      stringData: { key: 'hunter2' },
    })
    const secret = await kc
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ namespace, name: 'signing' })
    expect(secret.data).toEqual({ key: Buffer.from('hunter2').toString('base64') })
  })

  it('denies a forbidden token with 403 and answers 503 while unavailable', async () => {
    const other = new KubeConfig()
    other.loadFromFile(server.writeKubeconfig({ token: 'no-rbac' }))
    const denied = other.makeApiClient(CustomObjectsApi)
    const allow = server.forbid({
      token: 'no-rbac',
      verbs: ['list'],
      resources: ['inferencepools'],
    })
    const forbidden = await failure(denied.listNamespacedCustomObject(pools))
    expect(forbidden.body).toMatchObject({ reason: 'Forbidden', code: 403 })
    expect(forbidden.body.message).toContain('cannot list resource "inferencepools"')
    await custom.listNamespacedCustomObject(pools) // other tokens are not affected
    allow()
    await denied.listNamespacedCustomObject(pools)

    server.setUnavailable(true)
    const down = await failure(custom.listNamespacedCustomObject(pools))
    server.setUnavailable(false)
    expect(down.code).toBe(503)
  })
})

describe('@kubernetes/client-node informers', () => {
  const listPools = () => custom.listNamespacedCustomObject(pools)
  const informerPath = (timeoutSeconds: number) =>
    `${poolsPath}?allowWatchBookmarks=true&timeoutSeconds=${timeoutSeconds}`

  it('sees ADDED, MODIFIED and DELETED, reconnects after timeoutSeconds, keeps up with bookmarks', async () => {
    const informer = makeInformer<Pool>(kc, informerPath(1), listPools)
    const seen: string[] = []
    informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`))
    informer.on('update', (p) => seen.push(`update ${p.metadata?.name}`))
    informer.on('delete', (p) => seen.push(`delete ${p.metadata?.name}`))
    let connects = 0
    informer.on('connect', () => {
      connects += 1
    })
    await informer.start()
    await custom.createNamespacedCustomObject({ ...pools, body: examplePool('watched') })
    await until(() => seen.includes('add watched'), 'ADDED')
    await custom.patchNamespacedCustomObjectStatus(
      { ...pools, name: 'watched', body: { status: { readyPods: 1 } } },
      mergePatch,
    )
    await until(() => seen.includes('update watched'), 'MODIFIED')
    await custom.deleteNamespacedCustomObject({ ...pools, name: 'watched' })
    await until(() => seen.includes('delete watched'), 'DELETED')

    // A write elsewhere: only a bookmark can tell this informer the resourceVersion moved.
    server.objects.create('v1', 'configmaps', { metadata: { name: 'elsewhere', namespace } })
    // makeInformer returns a ListWatch; its type only promises Informer & ObjectCache.
    const latest = () => (informer as unknown as ListWatch<Pool>).latestResourceVersion()
    await until(() => latest() === server.resourceVersion, 'a BOOKMARK')
    await until(() => connects >= 2, 'a reconnect after timeoutSeconds')
    const watches = server.requests.filter((r) => r.verb === 'watch' && r.path === poolsPath)
    expect(watches.at(-1)?.query).toMatchObject({
      watch: 'true',
      allowWatchBookmarks: 'true',
      resourceVersion: expect.stringMatching(/^\d+$/),
    })
    await informer.stop()
  })

  it('reports a dropped watch as an error; restarted after compaction it gets 410 and relists', async () => {
    const informer = makeInformer<Pool>(kc, informerPath(60), listPools)
    const errors: unknown[] = []
    const seen: string[] = []
    informer.on('error', (error) => errors.push(error))
    informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`))
    informer.on('delete', (p) => seen.push(`delete ${p.metadata?.name}`))
    await custom.createNamespacedCustomObject({ ...pools, body: examplePool('doomed') })
    await informer.start()
    await until(() => seen.includes('add doomed') && server.openWatches > 0, 'the first watch')

    server.dropWatches()
    await until(() => errors.length === 1, "the informer's error")
    await custom.deleteNamespacedCustomObject({ ...pools, name: 'doomed' })
    await custom.createNamespacedCustomObject({ ...pools, body: examplePool('newcomer') })
    server.compactHistory()

    const lists = () => server.requests.filter((r) => r.verb === 'list' && r.path === poolsPath)
    const listsBefore = lists().length
    await informer.start() // from its old resourceVersion: ERROR 410 Expired, then a relist
    await until(() => seen.includes('add newcomer') && seen.includes('delete doomed'), 'the relist')
    expect(lists().length).toBe(listsBefore + 1)
    expect(informer.list().map((p) => p.metadata?.name)).not.toContain('doomed')
    await informer.stop()
  })

  it('sees objects leave and enter a label selection as DELETED and ADDED', async () => {
    const labelled = {
      ...examplePool('labelled'),
      metadata: { name: 'labelled', namespace, labels: { tier: 'gold' } },
    }
    await custom.createNamespacedCustomObject({ ...pools, body: labelled })
    const informer = makeInformer<Pool>(kc, poolsPath, listPools, 'tier=gold')
    const seen: string[] = []
    informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`))
    informer.on('delete', (p) => seen.push(`delete ${p.metadata?.name}`))
    await informer.start()
    await until(() => seen.includes('add labelled'), 'the initial list')
    const relabel = (tier: string) =>
      custom.patchNamespacedCustomObject(
        { ...pools, name: 'labelled', body: { metadata: { labels: { tier } } } },
        mergePatch,
      )
    await relabel('silver')
    await until(() => seen.includes('delete labelled'), 'leaving the selection')
    await relabel('gold')
    await until(() => seen.filter((s) => s === 'add labelled').length === 2, 'entering it again')
    await informer.stop()
  })

  it('a stalled watch sends nothing, so the client inactivity timeout reconnects it', async () => {
    const watch = new Watch(kc)
    // client-node's inactivity timeout is private and 30 s; shorten it for the test.
    ;(watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs = 300
    const informer = new ListWatch<Pool>(poolsPath, watch, listPools, false)
    const seen: string[] = []
    informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`))
    await informer.start()
    await until(() => server.openWatches > 0, 'the watch')
    server.stallWatches(true)
    await custom.createNamespacedCustomObject({ ...pools, body: examplePool('unseen') })
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(seen).not.toContain('add unseen')
    server.stallWatches(false)
    await until(() => seen.includes('add unseen'), 'the reconnected watch replaying the change')
    await informer.stop()
  })
})
