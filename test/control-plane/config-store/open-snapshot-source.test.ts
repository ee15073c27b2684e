import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { openSnapshotSource } from '../../../control-plane/config-store/open-snapshot-source.ts'
import { createRedisSnapshotStore } from '../../../control-plane/config-store/redis-snapshot-store.ts'
import { canonicalJson } from '../../../shared/config/canonical-json.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { snapshotVariant } from './snapshot-variant.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()
const dir = await mkdtemp(join(tmpdir(), 'kinf-config-source-'))
afterAll(() => rm(dir, { recursive: true, force: true }))

describe('opening a --config source', () => {
  it('reads a snapshot file once, verified, as version 0', async () => {
    const snapshot = await snapshotVariant(1)
    const path = join(dir, 'snapshot.json')
    await writeFile(path, canonicalJson(snapshot, 2))
    const source = await openSnapshotSource(path)
    expect(source.initial).toMatchObject({ version: 0, hash: snapshot.hash, snapshot })
    expect(source.feed.current()).toBe(source.initial)
    expect(source.origin).toBe(path)
    await source.feed.close()
  })

  it('says why a file will not do', async () => {
    await expect(openSnapshotSource(join(dir, 'missing.json'))).rejects.toMatchObject({
      code: 'invalid_config',
      message: `config ${join(dir, 'missing.json')}: no such file`,
    })
    const tampered = join(dir, 'tampered.json')
    await writeFile(tampered, JSON.stringify({ ...(await snapshotVariant(1)), tenants: {} }))
    await expect(openSnapshotSource(tampered)).rejects.toThrow(/does not match its content/)
    const notJson = join(dir, 'not.json')
    await writeFile(notJson, 'kind: KinferenceConfigSnapshot')
    await expect(openSnapshotSource(notJson)).rejects.toThrow(/not JSON/)
  })

  it('follows Redis for a redis:// value', async () => {
    const prefix = uniquePrefix()
    const store = await createRedisSnapshotStore({ redis, prefix })
    await store.publish(await snapshotVariant(1), 1)
    const source = await openSnapshotSource(redisUrl, { prefix, pollMs: 20 })
    try {
      expect(source.initial.version).toBe(1)
      const later: number[] = []
      source.feed.subscribe((published) => later.push(published.version))
      await store.publish(await snapshotVariant(2), 2)
      await vi.waitFor(() => expect(later).toEqual([2]))
      expect(source.feed.current()?.version).toBe(2)
    } finally {
      await source.feed.close()
    }
  })

  it('fails to open when Redis has no snapshot, or cannot be reached, without the password', async () => {
    await expect(openSnapshotSource(redisUrl, { prefix: uniquePrefix() })).rejects.toMatchObject({
      code: 'invalid_config',
      message: expect.stringMatching(
        /no verified config snapshot in redis:.* \(publish one first\)/,
      ),
    })
    const error = await openSnapshotSource('redis://user:hunter2@127.0.0.1:1').catch((e) => e)
    expect(error.message).toMatch(/redis:\/\/user:\*\*\*@127\.0\.0\.1:1.*max retries/)
    expect(error.message).not.toContain('hunter2')
  })
})
