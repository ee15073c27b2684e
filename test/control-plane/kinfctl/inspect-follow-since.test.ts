import { describe, expect, it } from 'vitest'
import { stateKeys } from '../../../control-plane/state/state-keys.ts'
import type { Decision } from '../../../shared/state/decision-entry.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { runCli } from '../../support/run-cli.ts'
import { decided, ended } from '../../support/state-store-conformance.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()

/**
 * The log as the scorer writes it (state-keys.ts: field e, one entry), with the stream ids
 * a write at `atMs` gets, so an entry can be older than --since without waiting.
 */
async function logAt(prefix: string, entries: [number, ReturnType<typeof decided>][]) {
  for (const [atMs, entry] of entries)
    await redis.xadd(stateKeys(prefix).decisions, `${atMs}-0`, 'e', JSON.stringify(entry))
}

describe('kinfctl inspect decisions --follow --since', () => {
  it('follows from --since: nothing older is shown, on the first read or any later one', async () => {
    const prefix = uniquePrefix()
    const now = Date.now()
    const old = now - 5 * 60_000
    await logAt(prefix, [
      [old, decided('old-request', old)],
      [old + 100, ended('old-request', old + 100)],
    ])
    const followed = await runCli(
      ['inspect', 'decisions', '--follow', '--since', '1m', '--interval', '50ms'].concat([
        '--prefix',
        prefix,
        '-o',
        'json',
      ]),
      '',
      {
        env: { REDIS_URL: redisUrl },
        // Several reads after the first, none of which may reach back past --since.
        interrupted: () => new Promise((resolve) => setTimeout(resolve, 400)),
      },
    )
    expect(followed.stderr).toBe('')
    expect(followed.code).toBe(0)
    expect(followed.stdout).not.toContain('old-request')
  })

  it('still shows what is in the window, the log so far and what comes later', async () => {
    const prefix = uniquePrefix()
    const now = Date.now()
    await logAt(prefix, [
      [now - 5 * 60_000, decided('old-request', now - 5 * 60_000)],
      [now - 10_000, decided('recent', now - 10_000)],
      [now - 9_000, ended('recent', now - 9_000)],
    ])
    let stop: () => void = () => {}
    const interrupted = new Promise<void>((resolve) => {
      stop = resolve
    })
    const following = runCli(
      ['inspect', 'decisions', '--follow', '--since', '1m', '--interval', '50ms'].concat([
        '--prefix',
        prefix,
        '-o',
        'json',
      ]),
      '',
      { env: { REDIS_URL: redisUrl }, interrupted: () => interrupted },
    )
    await new Promise((resolve) => setTimeout(resolve, 200))
    const later = Date.now()
    await logAt(prefix, [
      [later, decided('later', later)],
      [later + 1, ended('later', later + 1)],
    ])
    await new Promise((resolve) => setTimeout(resolve, 300))
    stop()
    const { code, stdout } = await following
    expect(code).toBe(0)
    const ids = stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as Decision).requestId)
    expect(ids).toEqual(['recent', 'later'])
  })
})
