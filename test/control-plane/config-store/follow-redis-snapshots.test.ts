import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { configStoreKeys } from '../../../control-plane/config-store/config-store-keys.ts'
import {
  type FollowRedisSnapshotsOptionsInput,
  followRedisSnapshots,
  type RedisSnapshotFollower,
} from '../../../control-plane/config-store/follow-redis-snapshots.ts'
import { createRedisSnapshotStore } from '../../../control-plane/config-store/redis-snapshot-store.ts'
import { canonicalJson } from '../../../shared/config/canonical-json.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { startTcpProxy } from '../../support/tcp-proxy.ts'
import { snapshotVariant } from './snapshot-variant.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()
const t0 = 1_800_000_000_000
const open: RedisSnapshotFollower[] = []
afterEach(async () => {
  for (const follower of open.splice(0)) await follower.close()
})

/** A follower recording what it hands on, refuses and logs. */
function follow(options: Omit<FollowRedisSnapshotsOptionsInput, 'onSnapshot' | 'onRefused'>) {
  const versions: number[] = []
  const refused: { version: number | null; reason: string }[] = []
  const lines: string[] = []
  const follower = followRedisSnapshots({
    log: (line) => lines.push(line),
    ...options,
    onSnapshot: (published) => {
      versions.push(published.version)
    },
    onRefused: (reason, version) => refused.push({ reason, version }),
  })
  open.push(follower)
  return { follower, versions, refused, lines }
}

async function subscribed(prefix: string) {
  await vi.waitFor(async () => {
    const [, count] = (await redis.pubsub('NUMSUB', configStoreKeys(prefix).notices)) as [
      string,
      number,
    ]
    expect(count).toBeGreaterThan(0)
  })
}

describe('following redis snapshots', () => {
  it('hands on the current version at start, then each newer one on its notice', async () => {
    const prefix = uniquePrefix()
    const store = await createRedisSnapshotStore({ redis, prefix })
    await store.publish(await snapshotVariant(1), t0)
    // A poll too slow to matter: what arrives, arrives by notice.
    const { follower, versions } = follow({ redis: redisUrl, prefix, pollMs: 600_000 })
    expect((await follower.ready)?.snapshot.hash).toBe((await snapshotVariant(1)).hash)
    const seen: number[] = []
    follower.subscribe((published) => seen.push(published.version))
    await subscribed(prefix)
    await store.publish(await snapshotVariant(2), t0 + 1)
    await vi.waitFor(() => expect(follower.current()?.version).toBe(2))
    expect(versions).toEqual([1, 2])
    expect(seen).toEqual([2])
  })

  it('is ready with null before anything is published, then follows', async () => {
    const prefix = uniquePrefix()
    const { follower, versions } = follow({ redis, prefix, pollMs: 600_000 })
    expect(await follower.ready).toBeNull()
    await subscribed(prefix)
    const store = await createRedisSnapshotStore({ redis, prefix })
    await store.publish(await snapshotVariant(1), t0)
    await vi.waitFor(() => expect(versions).toEqual([1]))
  })

  it('refuses a tampered or unparsable version and keeps the one it has', async () => {
    const prefix = uniquePrefix()
    const keys = configStoreKeys(prefix)
    const store = await createRedisSnapshotStore({ redis, prefix })
    await store.publish(await snapshotVariant(1), t0)
    const { follower, versions, refused, lines } = follow({ redis, prefix, pollMs: 600_000 })
    await follower.ready
    await subscribed(prefix)
    const v2 = await snapshotVariant(2)
    // Version 2 as an attacker or a bug would leave it: content changed, hash kept.
    await redis
      .multi()
      .incr(keys.version)
      .set(keys.snapshot(2), canonicalJson({ ...v2, tenants: {} }))
      .set(keys.current, JSON.stringify({ version: 2, hash: v2.hash, publishedAt: t0 + 1 }))
      .publish(keys.notices, JSON.stringify({ version: 2, hash: v2.hash }))
      .exec()
    await vi.waitFor(() => expect(refused.map((r) => r.version)).toEqual([2]))
    expect(refused[0]?.reason).toMatch(/does not match its content/)
    expect(lines.some((line) => line.includes('keeping version 1'))).toBe(true)
    expect(follower.current()?.version).toBe(1)
    await redis
      .multi()
      .incr(keys.version)
      .set(keys.snapshot(3), '{"kind": "KinferenceConfig')
      .set(keys.current, JSON.stringify({ version: 3, hash: v2.hash, publishedAt: t0 + 2 }))
      .publish(keys.notices, JSON.stringify({ version: 3, hash: v2.hash }))
      .exec()
    await vi.waitFor(() => expect(refused.map((r) => r.version)).toEqual([2, 3]))
    expect(refused[1]?.reason).toMatch(/not JSON/)
    // The next good version is taken.
    expect(await store.publish(await snapshotVariant(4), t0 + 3)).toMatchObject({ version: 4 })
    await vi.waitFor(() => expect(follower.current()?.version).toBe(4))
    expect(versions).toEqual([1, 4])
  })

  it('never goes back to an older version', async () => {
    const prefix = uniquePrefix()
    const keys = configStoreKeys(prefix)
    const store = await createRedisSnapshotStore({ redis, prefix })
    await store.publish(await snapshotVariant(1), t0)
    const older = (await redis.get(keys.current)) as string
    await store.publish(await snapshotVariant(2), t0 + 1)
    const { follower, lines } = follow({ redis, prefix, pollMs: 20 })
    expect((await follower.ready)?.version).toBe(2)
    await redis.set(keys.current, older)
    await redis.publish(keys.notices, JSON.stringify({ version: 1, hash: 'x' }))
    await vi.waitFor(() => expect(lines.join('\n')).toMatch(/at version 1, behind 2: ignored/))
    expect(follower.current()?.version).toBe(2)
    expect(lines.filter((line) => line.includes('behind'))).toHaveLength(1)
  })

  it('resubscribes after its connections are killed and still gets the next version', async () => {
    const prefix = uniquePrefix()
    const name = `follower-${randomUUID()}`
    const store = await createRedisSnapshotStore({ redis, prefix })
    await store.publish(await snapshotVariant(1), t0)
    const url = `${redisUrl}/?connectionName=${name}`
    const { follower, lines } = follow({ redis: url, prefix, pollMs: 600_000 })
    await follower.ready
    await subscribed(prefix)
    const clients = ((await redis.client('LIST')) as string)
      .split('\n')
      .filter((line) => line.includes(` name=${name} `))
    expect(clients).toHaveLength(2)
    for (const line of clients) await redis.client('KILL', 'ID', line.split(' ')[0]?.slice(3) ?? '')
    await vi.waitFor(() => expect(lines).toContain('config follower: resubscribed to notices'))
    await store.publish(await snapshotVariant(2), t0 + 1)
    await vi.waitFor(() => expect(follower.current()?.version).toBe(2))
    // And notices still arrive: the poll is too slow to have found these.
    await store.publish(await snapshotVariant(3), t0 + 2)
    await vi.waitFor(() => expect(follower.current()?.version).toBe(3))
  })

  it('survives Redis going away and coming back, catching up on what it missed', async () => {
    const prefix = uniquePrefix()
    const store = await createRedisSnapshotStore({ redis, prefix })
    await store.publish(await snapshotVariant(1), t0)
    const proxy = await startTcpProxy(Number(new URL(redisUrl).port || 6379))
    try {
      const { follower, lines } = follow({ redis: proxy.url, prefix, pollMs: 50 })
      expect((await follower.ready)?.version).toBe(1)
      await proxy.stop()
      await vi.waitFor(() => expect(lines.join('\n')).toMatch(/; keeping version 1/))
      // Published while the follower cannot hear: no notice reaches it.
      await store.publish(await snapshotVariant(2), t0 + 1)
      await proxy.start()
      await vi.waitFor(() => expect(follower.current()?.version).toBe(2), { timeout: 10_000 })
      expect(lines).toContain('config follower: redis reachable again')
    } finally {
      await proxy.stop()
    }
  })
})
