import { describe, expect, it } from 'vitest'
import { configStoreKeys } from '../../../control-plane/config-store/config-store-keys.ts'
import { createRedisSnapshotStore } from '../../../control-plane/config-store/redis-snapshot-store.ts'
import { canonicalJson } from '../../../shared/config/canonical-json.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { snapshotVariant } from './snapshot-variant.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()
const t0 = 1_800_000_000_000

describe('redis snapshot store', () => {
  it('publishes a version that current, versions and read give back, verified', async () => {
    const prefix = uniquePrefix()
    const store = await createRedisSnapshotStore({ redis, prefix })
    expect(await store.current()).toBeNull()
    const snapshot = await snapshotVariant(1)
    expect(await store.publish(snapshot, t0)).toEqual({ version: 1, changed: true })
    const current = await store.current()
    expect(current).toEqual({
      ok: true,
      published: { version: 1, hash: snapshot.hash, publishedAt: t0, snapshot },
    })
    expect(await store.versions()).toEqual([{ version: 1, hash: snapshot.hash, publishedAt: t0 }])
    expect(await store.read(1)).toEqual(current)
    expect(await store.read(2)).toBeNull()
    // The layout operators rely on (config-store-keys.ts).
    const keys = configStoreKeys(prefix)
    expect(await redis.get(keys.snapshot(1))).toBe(canonicalJson(snapshot))
    expect(JSON.parse((await redis.get(keys.current)) as string)).toEqual({
      version: 1,
      hash: snapshot.hash,
      publishedAt: t0,
    })
    expect(await redis.get(keys.version)).toBe('1')
    await store.close()
  })

  it('writes nothing for the hash already current', async () => {
    const prefix = uniquePrefix()
    const store = await createRedisSnapshotStore({ redis, prefix })
    await store.publish(await snapshotVariant(1), t0)
    expect(await store.publish(await snapshotVariant(1), t0 + 1)).toEqual({
      version: 1,
      changed: false,
    })
    expect(await store.publish(await snapshotVariant(2), t0 + 2)).toEqual({
      version: 2,
      changed: true,
    })
    expect((await store.versions()).map((v) => v.version)).toEqual([2, 1])
  })

  it('keeps the newest N versions, deleting older snapshots', async () => {
    const prefix = uniquePrefix()
    const store = await createRedisSnapshotStore({ redis, prefix, keep: 3 })
    for (let n = 1; n <= 5; n++) await store.publish(await snapshotVariant(n), t0 + n)
    expect((await store.versions()).map((v) => v.version)).toEqual([5, 4, 3])
    expect(await store.read(2)).toBeNull()
    expect((await redis.keys(`${prefix}config:snapshot:*`)).sort()).toEqual(
      [3, 4, 5].map((v) => `${prefix}config:snapshot:${v}`),
    )
    const third = await store.read(3)
    expect(third?.ok && third.published.snapshot.hash).toBe((await snapshotVariant(3)).hash)
  })

  it('rolls back by publishing a kept version again, as a new version', async () => {
    const prefix = uniquePrefix()
    const store = await createRedisSnapshotStore({ redis, prefix, keep: 3 })
    for (let n = 1; n <= 4; n++) await store.publish(await snapshotVariant(n), t0 + n)
    expect(await store.rollback(2, t0 + 10)).toEqual({ version: 5, changed: true })
    const current = await store.current()
    expect(current?.ok && current.published).toMatchObject({
      version: 5,
      hash: (await snapshotVariant(2)).hash,
      publishedAt: t0 + 10,
    })
    // Rolling back to what is current changes nothing.
    expect(await store.rollback(5, t0 + 11)).toEqual({ version: 5, changed: false })
    await expect(store.rollback(1, t0 + 12)).rejects.toMatchObject({
      code: 'not_found',
      message: 'config version 1 is not kept (kept: 5, 4, 3)',
    })
  })

  it('answers a tampered snapshot with a refusal, not a throw', async () => {
    const prefix = uniquePrefix()
    const store = await createRedisSnapshotStore({ redis, prefix })
    await store.publish(await snapshotVariant(1), t0)
    const key = configStoreKeys(prefix).snapshot(1)
    const stored = JSON.parse((await redis.get(key)) as string)
    stored.tenants = {}
    await redis.set(key, JSON.stringify(stored))
    const current = await store.current()
    expect(current).toMatchObject({ ok: false, version: 1, error: { code: 'invalid_config' } })
    expect(current?.ok === false && current.error.message).toMatch(/does not match its content/)
    await redis.set(key, '{not json')
    expect(await store.read(1)).toMatchObject({ ok: false, version: 1 })
    await expect(store.rollback(1, t0 + 1)).rejects.toMatchObject({ code: 'invalid_config' })
  })

  it('refuses to publish a snapshot whose hash does not match', async () => {
    const store = await createRedisSnapshotStore({ redis, prefix: uniquePrefix() })
    const snapshot = { ...(await snapshotVariant(1)), tenants: {} }
    await expect(store.publish(snapshot, t0)).rejects.toMatchObject({ code: 'invalid_config' })
    expect(await store.versions()).toEqual([])
  })

  it('connects itself from a URL and reports an unreachable Redis clearly', async () => {
    await expect(
      createRedisSnapshotStore({ redis: 'redis://127.0.0.1:1', prefix: uniquePrefix() }),
    ).rejects.toMatchObject({ code: 'upstream_unavailable' })
  })
})
