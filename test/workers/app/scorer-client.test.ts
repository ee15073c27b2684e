import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { EdgeClaims } from '../../../shared/auth/edge-signature.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { createScorerClient } from '../../../workers/app/scorer-client.ts'

const claims: EdgeClaims = { tenant: 't', labels: [], backends: [], allowBurst: false }
const servers: Server[] = []

/** A scorer stand-in that answers 200 and counts what reached it. */
async function replica(): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0
  const server = createServer((req, res) => {
    hits++
    req.resume()
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'))
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    hits: () => hits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/** A port nothing listens on: connections are refused, as to a scorer that was killed. */
async function refusedUrl(): Promise<string> {
  const gone = await replica()
  await gone.close()
  return gone.url
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(() => r(null)))))
})

describe('createScorerClient over several replicas', () => {
  it('retries a request on the next replica when one refuses the connection', async () => {
    const live = await replica()
    let now = 1_000
    const client = createScorerClient({
      urls: [await refusedUrl(), live.url],
      signingSecret: 'a-signing-secret-of-some-length',
      nowSeconds: () => now,
      fetch: globalThis.fetch,
    })
    for (let i = 0; i < 4; i++) {
      const response = await client.forward('/v1/chat/completions', '{}', claims, {})
      expect(response.status).toBe(200)
      now += 0.1
    }
    expect(live.hits()).toBe(4)
  })

  it('spreads requests over replicas that answer', async () => {
    const a = await replica()
    const b = await replica()
    const client = createScorerClient({
      urls: [a.url, b.url],
      signingSecret: 'a-signing-secret-of-some-length',
      nowSeconds: () => 1_000,
      fetch: globalThis.fetch,
    })
    for (let i = 0; i < 6; i++) await client.forward('/v1/completions', '{}', claims, {})
    expect([a.hits(), b.hits()]).toEqual([3, 3])
  })

  it('is upstream_unavailable when no replica can be reached', async () => {
    const client = createScorerClient({
      urls: [await refusedUrl(), await refusedUrl()],
      signingSecret: 'a-signing-secret-of-some-length',
      nowSeconds: () => 1_000,
      fetch: globalThis.fetch,
    })
    const failure = await client.forward('/v1/completions', '{}', claims, {}).catch((e) => e)
    expect(failure).toBeInstanceOf(KinfError)
    expect((failure as KinfError).code).toBe('upstream_unavailable')
  })

  it('needs at least one URL', () => {
    expect(() =>
      createScorerClient({ urls: [], signingSecret: 'x', nowSeconds: () => 0, fetch }),
    ).toThrow(KinfError)
  })
})
