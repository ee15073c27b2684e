import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCloudflareKvPublisher } from '../../../control-plane/config-store/cloudflare-kv-publisher.ts'
import { kvSnapshotKey as snapshotKey } from '../../../shared/protocol/kv-snapshot-key.ts'
import { createKvSnapshotLoader } from '../../../workers/worker/kv-snapshot-loader.ts'
import { type FakeCloudflareKv, startFakeCloudflareKv } from '../../support/fake-cloudflare-kv.ts'
import { snapshotVariant } from './snapshot-variant.ts'

let kv: FakeCloudflareKv
beforeAll(async () => {
  kv = await startFakeCloudflareKv()
})
afterAll(() => kv.close())

function publisher(more: { apiToken?: string; namespaceId?: string; accountId?: string } = {}) {
  return createCloudflareKvPublisher({
    accountId: kv.accountId,
    namespaceId: kv.namespaceId,
    apiToken: kv.apiToken,
    baseUrl: kv.baseUrl,
    ...more,
  })
}

describe('cloudflare kv publisher', () => {
  it('writes the snapshot the Worker loader verifies, with its version as metadata', async () => {
    const snapshot = await snapshotVariant(1)
    const kvPublisher = publisher()
    expect(await kvPublisher.publish(snapshot, 7)).toMatchObject({ ok: true, key: 'snapshot' })
    const request = kv.requests.at(-1)
    expect(request).toEqual({
      method: 'PUT',
      path: `/client/v4/accounts/${kv.accountId}/storage/kv/namespaces/${kv.namespaceId}/values/snapshot`,
      authorized: true,
    })
    expect(kv.values.get(snapshotKey)?.metadata).toEqual({ version: 7, hash: snapshot.hash })
    // The Worker's own loader, reading through the REST API.
    const load = createKvSnapshotLoader(
      {
        get: async (key) => {
          const read = await kvPublisher.read()
          if (!read.ok || key !== snapshotKey) throw new Error('read failed')
          return read.value
        },
      },
      { ttlMs: 0, nowMs: () => 0 },
    )
    expect(await load()).toEqual(snapshot)
    expect(await kvPublisher.read()).toMatchObject({
      ok: true,
      metadata: { version: 7, hash: snapshot.hash },
    })
  })

  it('reads an absent key as null', async () => {
    const other = await startFakeCloudflareKv()
    try {
      const read = await createCloudflareKvPublisher({
        accountId: other.accountId,
        namespaceId: other.namespaceId,
        apiToken: other.apiToken,
        baseUrl: other.baseUrl,
      }).read()
      expect(read).toEqual({ ok: true, value: null, metadata: null })
    } finally {
      await other.close()
    }
  })

  it('refuses a bad token with Cloudflare’s code, never its text', async () => {
    const token = 'wrong-token-4b0d1f'
    const result = await publisher({ apiToken: token }).publish(await snapshotVariant(1), 1)
    expect(result).toMatchObject({ ok: false, status: 403, codes: [10000] })
    if (result.ok) return
    expect(result.error.code).toBe('forbidden')
    expect(result.error.isRetryable).toBe(false)
    expect(result.error.message).toContain('Authentication error [code: 10000]')
    expect(result.error.message).toContain('check the API token')
    expect(result.error.message).not.toContain(token)
  })

  it('says which id is wrong: another account, an unknown namespace', async () => {
    const snapshot = await snapshotVariant(1)
    const account = await publisher({ accountId: 'a'.repeat(32) }).publish(snapshot, 1)
    expect(account).toMatchObject({ ok: false, status: 403, codes: [10000] })
    const namespace = await publisher({ namespaceId: 'b'.repeat(32) }).publish(snapshot, 1)
    expect(namespace).toMatchObject({ ok: false, status: 404, codes: [10013] })
    if (!namespace.ok) {
      expect(namespace.error.code).toBe('not_found')
      expect(namespace.error.message).toMatch(/namespace not found \[code: 10013\].*namespace ids/)
    }
  })

  it('answers 429 with the Retry-After hint, and 5xx as retryable', async () => {
    const snapshot = await snapshotVariant(1)
    kv.failNext(1, { status: 429, retryAfterSeconds: 17 })
    const limited = await publisher().publish(snapshot, 1)
    expect(limited).toMatchObject({ ok: false, status: 429, codes: [971] })
    if (!limited.ok) {
      expect(limited.error).toMatchObject({
        code: 'rate_limited',
        retryAfterSeconds: 17,
        isRetryable: true,
      })
      expect(limited.error.message).toMatch(/throttling.*\[code: 971\]; retry after 17 seconds/)
    }
    kv.failNext(2, { status: 502, html: true })
    for (let i = 0; i < 2; i++) {
      const failed = await publisher().publish(snapshot, 1)
      expect(failed).toMatchObject({ ok: false, status: 502, codes: [] })
      if (!failed.ok) {
        expect(failed.error).toMatchObject({ code: 'upstream_unavailable', isRetryable: true })
        expect(failed.error.message).toMatch(/HTTP 502: .*; retry later/)
      }
    }
    expect(await publisher().publish(snapshot, 2)).toMatchObject({ ok: true })
  })

  it('reports no answer within the timeout as retryable', async () => {
    const stalled: typeof fetch = (_url, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason))
      })
    const result = await createCloudflareKvPublisher({
      accountId: kv.accountId,
      namespaceId: kv.namespaceId,
      apiToken: kv.apiToken,
      fetch: stalled,
      timeoutMs: 20,
    }).publish(await snapshotVariant(1), 1)
    expect(result).toMatchObject({ ok: false, status: null })
    if (!result.ok) expect(result.error.message).toMatch(/no answer within 20 ms; retry later/)
  })

  it('refuses options and snapshots it cannot publish before sending anything', async () => {
    expect(() =>
      createCloudflareKvPublisher({ accountId: 'a/b', namespaceId: 'n', apiToken: 't' }),
    ).toThrow(/accountId must be a Cloudflare id/)
    const before = kv.requests.length
    const tampered = { ...(await snapshotVariant(1)), tenants: {} }
    await expect(publisher().publish(tampered, 1)).rejects.toMatchObject({
      code: 'invalid_config',
    })
    expect(kv.requests.length).toBe(before)
  })
})

describe('fake cloudflare kv', () => {
  it('answers a missing or malformed Authorization header as Cloudflare does', async () => {
    const url = `${kv.baseUrl}/accounts/${kv.accountId}/storage/kv/namespaces/${kv.namespaceId}/values/snapshot`
    const missing = await fetch(url)
    expect(missing.status).toBe(400)
    expect(((await missing.json()) as any).errors[0].code).toBe(9106)
    const malformed = await fetch(url, { headers: { authorization: 'Token x' } })
    expect(malformed.status).toBe(400)
    expect(((await malformed.json()) as any).errors[0]).toMatchObject({ code: 6003 })
  })
})
