import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { openConfigFeed } from '../../../control-plane/config-store/open-config-feed.ts'
import type { PublishedSnapshot } from '../../../control-plane/config-store/published-snapshot.ts'
import { createRedisSnapshotStore } from '../../../control-plane/config-store/redis-snapshot-store.ts'
import { canonicalJson } from '../../../shared/config/canonical-json.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { snapshotVariant } from './snapshot-variant.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()
const dir = await mkdtemp(join(tmpdir(), 'kinf-config-source-'))
afterAll(() => rm(dir, { recursive: true, force: true }))

function open(config: string, prefix = 'kinf:', interrupted = new Promise<void>(() => {})) {
  const seen: PublishedSnapshot[] = []
  const logs: string[] = []
  const opened = openConfigFeed({
    config,
    prefix,
    pollMs: 20,
    log: (line) => logs.push(line),
    interrupted,
    onSnapshot: (published) => seen.push(published),
  })
  return { opened, seen, logs }
}

describe('opening a --config source', () => {
  it('reads a snapshot file once, verified, as version 0', async () => {
    const snapshot = await snapshotVariant(1)
    const path = join(dir, 'snapshot.json')
    await writeFile(path, canonicalJson(snapshot, 2))
    const { opened, seen } = open(path)
    const source = await opened
    expect(source?.initial).toMatchObject({ version: 0, hash: snapshot.hash, snapshot })
    expect(source?.feed.current()).toBe(source?.initial)
    expect(source?.origin).toBe(path)
    expect(seen).toEqual([source?.initial])
    await source?.feed.close()
  })

  it('says why a file will not do', async () => {
    await expect(open(join(dir, 'missing.json')).opened).rejects.toMatchObject({
      code: 'invalid_config',
      message: `config ${join(dir, 'missing.json')}: no such file`,
    })
    const tampered = join(dir, 'tampered.json')
    await writeFile(tampered, JSON.stringify({ ...(await snapshotVariant(1)), tenants: {} }))
    await expect(open(tampered).opened).rejects.toThrow(/does not match its content/)
    const notJson = join(dir, 'not.json')
    await writeFile(notJson, 'kind: KinferenceConfigSnapshot')
    await expect(open(notJson).opened).rejects.toThrow(/not JSON/)
  })

  it('follows Redis for a redis:// value', async () => {
    const prefix = uniquePrefix()
    const store = await createRedisSnapshotStore({ redis, prefix })
    await store.publish(await snapshotVariant(1), 1)
    const { opened, seen } = open(redisUrl, prefix)
    const source = await opened
    try {
      expect(source?.initial.version).toBe(1)
      await store.publish(await snapshotVariant(2), 2)
      await vi.waitFor(() => expect(seen.map((s) => s.version)).toEqual([1, 2]))
      expect(source?.feed.current()?.version).toBe(2)
    } finally {
      await source?.feed.close()
    }
  })

  it('waits for a first snapshot in Redis, and gives up when interrupted', async () => {
    const prefix = uniquePrefix()
    const store = await createRedisSnapshotStore({ redis, prefix })
    const waiting = open(redisUrl, prefix)
    await vi.waitFor(() => expect(waiting.logs.join('\n')).toMatch(/yet; waiting/))
    await store.publish(await snapshotVariant(1), 1)
    const source = await waiting.opened
    expect(source?.initial.version).toBe(1)
    await source?.feed.close()
    let interrupt = () => {}
    const stopped = open(
      'redis://user:hunter2@127.0.0.1:1',
      prefix,
      new Promise<void>((resolve) => {
        interrupt = resolve
      }),
    )
    // Unreachable: stopping does not wait for the first read, and logs never hold the password.
    await vi.waitFor(() => expect(stopped.logs.length).toBeGreaterThan(0), { timeout: 10_000 })
    expect(stopped.logs.join('\n')).not.toContain('hunter2')
    interrupt()
    expect(await stopped.opened).toBeNull()
  })
})
