import { ListWatch, makeInformer, Watch } from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import {
  examplePool,
  mergePatch,
  namespace,
  type Pool,
  pools,
  poolsPath,
  until,
  useServerWithClient,
} from './client-node-fixtures.ts'

const api = useServerWithClient()

describe('@kubernetes/client-node informers', () => {
  const listPools = () => api.custom.listNamespacedCustomObject(pools)
  const informerPath = (timeoutSeconds: number) =>
    `${poolsPath}?allowWatchBookmarks=true&timeoutSeconds=${timeoutSeconds}`

  it('sees ADDED, MODIFIED and DELETED, reconnects after timeoutSeconds, keeps up with bookmarks', async () => {
    const informer = makeInformer<Pool>(api.kc, informerPath(1), listPools)
    const seen: string[] = []
    informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`))
    informer.on('update', (p) => seen.push(`update ${p.metadata?.name}`))
    informer.on('delete', (p) => seen.push(`delete ${p.metadata?.name}`))
    let connects = 0
    informer.on('connect', () => {
      connects += 1
    })
    await informer.start()
    await api.custom.createNamespacedCustomObject({ ...pools, body: examplePool('watched') })
    await until(() => seen.includes('add watched'), 'ADDED')
    await api.custom.patchNamespacedCustomObjectStatus(
      { ...pools, name: 'watched', body: { status: { readyPods: 1 } } },
      mergePatch,
    )
    await until(() => seen.includes('update watched'), 'MODIFIED')
    await api.custom.deleteNamespacedCustomObject({ ...pools, name: 'watched' })
    await until(() => seen.includes('delete watched'), 'DELETED')

    // A write elsewhere: only a bookmark can tell this informer the resourceVersion moved.
    api.server.objects.create('v1', 'configmaps', { metadata: { name: 'elsewhere', namespace } })
    // makeInformer returns a ListWatch; its type only promises Informer & ObjectCache.
    const latest = () => (informer as unknown as ListWatch<Pool>).latestResourceVersion()
    await until(() => latest() === api.server.resourceVersion, 'a BOOKMARK')
    await until(() => connects >= 2, 'a reconnect after timeoutSeconds')
    const watches = api.server.requests.filter((r) => r.verb === 'watch' && r.path === poolsPath)
    expect(watches.at(-1)?.query).toMatchObject({
      watch: 'true',
      allowWatchBookmarks: 'true',
      resourceVersion: expect.stringMatching(/^\d+$/),
    })
    await informer.stop()
  })

  it('reports a dropped watch as an error; restarted after compaction it gets 410 and relists', async () => {
    const informer = makeInformer<Pool>(api.kc, informerPath(60), listPools)
    const errors: unknown[] = []
    const seen: string[] = []
    informer.on('error', (error) => errors.push(error))
    informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`))
    informer.on('delete', (p) => seen.push(`delete ${p.metadata?.name}`))
    await api.custom.createNamespacedCustomObject({ ...pools, body: examplePool('doomed') })
    await informer.start()
    await until(() => seen.includes('add doomed') && api.server.openWatches > 0, 'the first watch')

    api.server.dropWatches()
    await until(() => errors.length === 1, "the informer's error")
    await api.custom.deleteNamespacedCustomObject({ ...pools, name: 'doomed' })
    await api.custom.createNamespacedCustomObject({ ...pools, body: examplePool('newcomer') })
    api.server.compactHistory()

    const lists = () => api.server.requests.filter((r) => r.verb === 'list' && r.path === poolsPath)
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
    await api.custom.createNamespacedCustomObject({ ...pools, body: labelled })
    const informer = makeInformer<Pool>(api.kc, poolsPath, listPools, 'tier=gold')
    const seen: string[] = []
    informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`))
    informer.on('delete', (p) => seen.push(`delete ${p.metadata?.name}`))
    await informer.start()
    await until(() => seen.includes('add labelled'), 'the initial list')
    const relabel = (tier: string) =>
      api.custom.patchNamespacedCustomObject(
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
    const watch = new Watch(api.kc)
    // client-node's inactivity timeout is private and 30 s; shorten it for the test.
    ;(watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs = 300
    const informer = new ListWatch<Pool>(poolsPath, watch, listPools, false)
    const seen: string[] = []
    informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`))
    await informer.start()
    await until(() => api.server.openWatches > 0, 'the watch')
    api.server.stallWatches(true)
    await api.custom.createNamespacedCustomObject({ ...pools, body: examplePool('unseen') })
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(seen).not.toContain('add unseen')
    api.server.stallWatches(false)
    await until(() => seen.includes('add unseen'), 'the reconnected watch replaying the change')
    await informer.stop()
  })
})
