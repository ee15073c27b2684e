import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type KubeApiServer, startKubeApiServer } from './start-kube-api-server.ts'

const pools = '/apis/kinference.dev/v1alpha1/namespaces/kinference/inferencepools'

let server: KubeApiServer

beforeAll(async () => {
  server = await startKubeApiServer({
    namespaces: ['default', 'kinference'],
    crds: ['infra/k8s/crds/kinference.dev_inferencepools.yaml'],
    bookmarkIntervalMs: 50,
    maxBodyBytes: 64 * 1024,
  })
})

afterAll(async () => {
  await server?.close()
})

async function call(
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ code: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.token}`, 'content-type': contentType },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  })
  const text = await response.text()
  return { code: response.status, body: text.startsWith('{') ? JSON.parse(text) : text }
}

function pool(name: string, labels: Record<string, string> = {}) {
  return {
    apiVersion: 'kinference.dev/v1alpha1',
    kind: 'InferencePool',
    metadata: { name, labels },
    spec: {
      selector: { matchLabels: { app: name } },
      targetPort: 8000,
      models: [{ name: 'm', tokenizer: 'qwen3' }],
      gpuProfile: 'l4-8b-bf16',
    },
  }
}

/** Reads a watch's NDJSON lines until `count` arrived, the stream ended, or `ms` passed. */
async function watchLines(path: string, count: number, ms = 2_000): Promise<any[]> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), ms)
  const lines: any[] = []
  try {
    const response = await fetch(`${server.url}${path}`, { signal: controller.signal })
    expect(response.status).toBe(200)
    const decoder = new TextDecoder()
    let buffered = ''
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true })
      const parts = buffered.split('\n')
      buffered = parts.pop() ?? ''
      lines.push(...parts.filter(Boolean).map((line) => JSON.parse(line)))
      if (lines.length >= count) break
    }
  } catch (error) {
    if ((error as Error).name !== 'AbortError') throw error
  } finally {
    clearTimeout(timer)
    controller.abort()
  }
  return lines
}

describe('discovery', () => {
  it('serves version, legacy group lists, resource lists with status entries, and OpenAPI v3', async () => {
    expect((await call('GET', '/version')).body).toMatchObject({ major: '1', minor: '33' })
    expect((await call('GET', '/api')).body).toMatchObject({
      kind: 'APIVersions',
      versions: ['v1'],
    })
    const groups = (await call('GET', '/apis')).body
    expect(groups.groups.map((g: any) => g.name)).toEqual([
      'discovery.k8s.io',
      'coordination.k8s.io',
      'apps',
      'rbac.authorization.k8s.io',
      'networking.k8s.io',
      'autoscaling',
      'policy',
      'apiextensions.k8s.io',
      'kinference.dev',
    ])
    const resources = (await call('GET', '/apis/kinference.dev/v1alpha1')).body
    expect(resources.resources).toEqual([
      expect.objectContaining({
        name: 'inferencepools',
        singularName: 'inferencepool',
        namespaced: true,
        kind: 'InferencePool',
        shortNames: ['kpool'],
        categories: ['kinference'],
      }),
      expect.objectContaining({ name: 'inferencepools/status', verbs: ['get', 'patch', 'update'] }),
    ])
    const index = (await call('GET', '/openapi/v3')).body
    const url = index.paths['apis/kinference.dev/v1alpha1'].serverRelativeURL
    const document = (await call('GET', url)).body
    expect(Object.keys(document.paths)).toContain(
      `${pools}/{name}`.replace('/kinference/', '/{namespace}/'),
    )
    expect((await call('GET', '/openapi/v2')).code).toBe(404)
  })

  it('stores the built-in kinds the Helm chart creates, namespaced or cluster-wide', async () => {
    const kinds = [
      ['apps/v1', 'deployments', 'Deployment', true],
      ['v1', 'services', 'Service', true],
      ['v1', 'serviceaccounts', 'ServiceAccount', true],
      ['rbac.authorization.k8s.io/v1', 'roles', 'Role', true],
      ['rbac.authorization.k8s.io/v1', 'rolebindings', 'RoleBinding', true],
      ['rbac.authorization.k8s.io/v1', 'clusterroles', 'ClusterRole', false],
      ['rbac.authorization.k8s.io/v1', 'clusterrolebindings', 'ClusterRoleBinding', false],
      ['networking.k8s.io/v1', 'networkpolicies', 'NetworkPolicy', true],
      ['autoscaling/v2', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler', true],
      ['policy/v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true],
    ] as const
    for (const [apiVersion, plural, kind, namespaced] of kinds) {
      const root = apiVersion === 'v1' ? '/api/v1' : `/apis/${apiVersion}`
      const path = `${root}${namespaced ? '/namespaces/kinference' : ''}/${plural}`
      const body = { apiVersion, kind, metadata: { name: 'chart' }, spec: { x: 1 } }
      expect((await call('POST', path, body)).code, kind).toBe(201)
      expect((await call('GET', `${path}/chart`)).body.spec, kind).toEqual({ x: 1 })
    }
    expect(
      (await call('GET', '/apis/apps/v1/namespaces/kinference/deployments/chart/status')).code,
    ).toBe(200)
  })

  it('answers 404 Status for unknown paths and resources', async () => {
    for (const path of [
      '/nope',
      '/apis/nope.dev/v1/things',
      '/api/v2',
      `${pools}/x/scale`,
      '/api/v1/namespaces/%E0%A4%A',
    ]) {
      const answer = await call('GET', path)
      expect(answer.code, path).toBe(404)
      expect(answer.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'NotFound' })
    }
  })
})

describe('hostile and malformed requests', () => {
  it('answers Status errors and keeps serving', async () => {
    expect((await call('POST', pools, '{"metadata":')).body).toMatchObject({
      code: 400,
      reason: 'BadRequest',
    })
    expect((await call('POST', pools, '[1,2]')).code).toBe(400)
    expect((await call('POST', pools, 'x'.repeat(100 * 1024))).body).toMatchObject({
      code: 413,
      reason: 'RequestEntityTooLarge',
    })
    expect((await call('POST', pools, pool('a'), 'application/vnd.kubernetes.protobuf')).code).toBe(
      415,
    )
    expect((await call('PATCH', `${pools}/a`, {}, 'text/plain')).code).toBe(415)
    expect((await call('PUT', pools, pool('a'))).code).toBe(405)
    expect(
      (await call('GET', `${pools}?labelSelector=${encodeURIComponent('a in (b')}`)).code,
    ).toBe(400)
    expect((await call('GET', `${pools}?fieldSelector=spec.x%3Dy`)).code).toBe(400)
    expect((await call('GET', `${pools}?watch=true&resourceVersion=abc`)).code).toBe(400)
    expect((await call('GET', `${pools}?dryRun=Maybe`)).code).toBe(200) // only writes read it
    expect((await call('POST', pools, pool('a'), 'application/json')).code).toBe(201)
    expect((await call('POST', `${pools}?dryRun=Maybe`, pool('b'))).code).toBe(400)
  })

  it('refuses bodies nested deeper than the real server decodes', async () => {
    const depth = 10_001 // within this server's 64 KiB body limit
    const data = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
    const body = `{"metadata":{"name":"deep"},"data":${data}}`
    expect((await call('POST', '/api/v1/namespaces/default/configmaps', body)).body).toMatchObject({
      code: 400,
      message: expect.stringContaining('nested deeper'),
    })
  })

  it('does not let __proto__ keys reach prototypes', async () => {
    const body =
      '{"metadata":{"name":"proto","__proto__":{"polluted":true}},"spec":{"gpuProfile":"x","selector":{"matchLabels":{}},"targetPort":1,"models":[]}}'
    expect((await call('POST', pools, body)).code).toBe(201)
    const patched = await call(
      'PATCH',
      `${pools}/proto`,
      '{"metadata":{"__proto__":{"x":1}}}',
      'application/merge-patch+json',
    )
    expect(patched.code).toBe(200)
    expect(({} as any).polluted).toBeUndefined()
    expect(({} as any).x).toBeUndefined()
  })

  it('closes cleanly a request whose declared body is larger than the limit', async () => {
    const code = await new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}${pools}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) },
      })
      req.on('response', (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', reject)
      req.write('{')
    })
    expect(code).toBe(413)
    expect((await call('GET', '/version')).code).toBe(200)
  })
})

describe('writes', () => {
  it('PUT checks the name, PATCH merges, DELETE returns the object, deletecollection by label', async () => {
    await call('POST', pools, pool('w1', { batch: 'x' }))
    await call('POST', pools, pool('w2', { batch: 'x' }))
    const current = (await call('GET', `${pools}/w1`)).body
    expect(
      (
        await call('PUT', `${pools}/w1`, {
          ...current,
          metadata: { ...current.metadata, name: 'other' },
        })
      ).code,
    ).toBe(400)
    const merged = await call(
      'PATCH',
      `${pools}/w1`,
      { metadata: { labels: { batch: null, extra: 'y' } } },
      'application/merge-patch+json',
    )
    expect(merged.body.metadata.labels).toEqual({ extra: 'y' })
    expect(merged.body.metadata.generation).toBe(1)
    const removed = await call('DELETE', `${pools}/w1`)
    expect(removed.body.metadata.name).toBe('w1')
    expect((await call('GET', `${pools}/w1`)).code).toBe(404)
    const collection = await call('DELETE', `${pools}?labelSelector=batch%3Dx`)
    expect(collection.body.items.map((p: any) => p.metadata.name)).toEqual(['w2'])
  })

  it('keeps an object with finalizers until they are removed, and refuses new ones', async () => {
    const held = { ...pool('held'), metadata: { name: 'held', finalizers: ['a/b'] } }
    await call('POST', pools, held)
    const marked = await call('DELETE', `${pools}/held`)
    expect(marked.body.metadata).toMatchObject({
      deletionTimestamp: expect.any(String),
      generation: 2,
    })
    const more = { metadata: { finalizers: ['a/b', 'c/d'] } }
    expect((await call('PATCH', `${pools}/held`, more, 'application/merge-patch+json')).code).toBe(
      422,
    )
    const release = { metadata: { finalizers: null } }
    expect(
      (await call('PATCH', `${pools}/held`, release, 'application/merge-patch+json')).code,
    ).toBe(200)
    expect((await call('GET', `${pools}/held`)).code).toBe(404)
  })

  it('refuses objects in a missing namespace, and cascades namespace deletion', async () => {
    const elsewhere = pools.replace('/kinference/', '/nowhere/')
    expect((await call('POST', elsewhere, pool('x'))).body).toMatchObject({
      code: 404,
      details: { kind: 'namespaces' },
    })
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'doomed' } })
    await call('POST', pools.replace('/kinference/', '/doomed/'), pool('inside'))
    await call('DELETE', '/api/v1/namespaces/doomed')
    expect(
      server.objects.get('kinference.dev/v1alpha1', 'inferencepools', 'doomed', 'inside'),
    ).toBeUndefined()
  })

  it('a deleted CRD takes its objects and its discovery entry with it', async () => {
    const crd =
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/inferencepools.kinference.dev'
    const definition = (await call('GET', crd)).body
    expect(definition.status.conditions.map((c: any) => c.type)).toEqual([
      'NamesAccepted',
      'Established',
    ])
    await call('POST', pools, pool('with-crd'))
    await call('DELETE', crd)
    expect((await call('GET', '/apis/kinference.dev/v1alpha1')).code).toBe(404)
    expect((await call('GET', pools)).code).toBe(404)
    const { metadata: _, status: __, ...again } = definition
    expect(
      (
        await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
          ...again,
          metadata: { name: definition.metadata.name },
        })
      ).code,
    ).toBe(201)
    expect((await call('GET', pools)).body.items).toEqual([])
  })
})

describe('watch over raw HTTP', () => {
  it('resourceVersion=0 starts with ADDED for the current state, then live events and bookmarks', async () => {
    await call('POST', pools, pool('live'))
    const lines = watchLines(`${pools}?watch=1&resourceVersion=0&allowWatchBookmarks=true`, 4)
    await new Promise((resolve) => setTimeout(resolve, 100))
    await call('PATCH', `${pools}/live`, { spec: { ttftSloMs: 1 } }, 'application/merge-patch+json')
    const events = await lines
    expect(events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'live' } } })
    const types = events.map((e) => e.type)
    expect(types).toContain('MODIFIED')
    expect(types).toContain('BOOKMARK')
    const bookmark = events.find((e) => e.type === 'BOOKMARK')
    expect(bookmark.object).toEqual({
      kind: 'InferencePool',
      apiVersion: 'kinference.dev/v1alpha1',
      metadata: { resourceVersion: expect.stringMatching(/^\d+$/) },
    })
  })

  it('replays history after a resourceVersion, ends at timeoutSeconds, and expires after compaction', async () => {
    const from = server.resourceVersion
    await call('POST', pools, pool('replayed'))
    await call('DELETE', `${pools}/replayed`)
    const replay = await watchLines(
      `${pools}?watch=true&resourceVersion=${from}&timeoutSeconds=1`,
      99,
      3_000,
    )
    expect(replay.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      'ADDED replayed',
      'DELETED replayed',
    ])
    expect(Number(replay[1].object.metadata.resourceVersion)).toBe(Number(from) + 2)

    server.compactHistory()
    const expired = await watchLines(`${pools}?watch=true&resourceVersion=${from}`, 99)
    expect(expired).toEqual([
      {
        type: 'ERROR',
        object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }),
      },
    ])
    const current = await watchLines(
      `${pools}?watch=true&resourceVersion=${server.resourceVersion}&timeoutSeconds=1`,
      99,
      3_000,
    )
    expect(current).toEqual([])
  })

  it('sendInitialEvents ends the initial state with an annotated bookmark', async () => {
    const events = await watchLines(
      `${pools}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
      99,
      500,
    )
    const end = events.findIndex(
      (e) => e.object.metadata.annotations?.['k8s.io/initial-events-end'],
    )
    expect(end).toBe(events.filter((e) => e.type === 'ADDED').length)
  })
})
