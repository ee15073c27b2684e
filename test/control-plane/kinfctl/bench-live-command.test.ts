import { mkdtempSync, readFileSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { exitCode } from '../../../control-plane/kinfctl/cli-io.ts'
import type { BenchmarkReport } from '../../../control-plane/lab/bench/write-benchmark-reports.ts'
import { type LocalHttpServer, startLocalHttpServer } from '../../support/local-http-server.ts'
import { runCli } from '../../support/run-cli.ts'

const key = 'kinf_test_right-key'

/**
 * An OpenAI-compatible endpoint reduced to what a live bench sends it: 401 with OpenAI's
 * error body unless the request carries `authorization: Bearer <key>`, else a streamed
 * chat completion of two tokens with usage. `failEvery` answers 500 to every n-th request
 * that carries the key.
 */
function chatEndpoint(seen: (string | undefined)[], failEvery = 0) {
  let answered = 0
  return (req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    req.on('end', () => {
      seen.push(req.headers.authorization)
      if (req.headers.authorization !== `Bearer ${key}`) {
        res.writeHead(401, { 'content-type': 'application/json' })
        res.end(
          JSON.stringify({
            error: {
              message: 'Incorrect API key provided.',
              type: 'invalid_request_error',
              param: null,
              code: 'invalid_api_key',
            },
          }),
        )
        return
      }
      answered++
      if (failEvery > 0 && answered % failEvery === 0) {
        res.writeHead(500, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: 'the pod fell over', type: 'server_error' } }))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const chunk = (body: object) => res.write(`data: ${JSON.stringify(body)}\n\n`)
      for (const content of ['Hello', ' there'])
        chunk({
          id: 'c',
          object: 'chat.completion.chunk',
          choices: [{ index: 0, delta: { content } }],
        })
      chunk({
        id: 'c',
        object: 'chat.completion.chunk',
        choices: [],
        usage: { prompt_tokens: 16, completion_tokens: 2, total_tokens: 18 },
      })
      res.end('data: [DONE]\n\n')
    })
  }
}

let server: LocalHttpServer | null = null
afterEach(async () => {
  await server?.close()
  server = null
})

async function liveBench(target: string, extra: string[], env: Record<string, string> = {}) {
  const out = join(mkdtempSync(join(tmpdir(), 'kinfctl-bench-live-')), 'out')
  const args = [
    'bench',
    '--mode',
    'live',
    '--target',
    target,
    '--data',
    'prompt_tokens=16,output_tokens=2',
    '--profile',
    'concurrent',
    '--rate',
    '2',
    '--max-requests',
    '6',
    '--routers',
    'edge',
    '--time-scale',
    '1',
    '--out',
    out,
    ...extra,
  ]
  return { ...(await runCli(args, '', { env })), out }
}

const report = (out: string) =>
  JSON.parse(readFileSync(join(out, 'benchmarks.json'), 'utf8')) as BenchmarkReport

describe('kinfctl bench --mode live --target: the API key and failures', () => {
  it('every request refused (401): exits non-zero with the first error, status and OpenAI message', async () => {
    const seen: (string | undefined)[] = []
    server = await startLocalHttpServer(chatEndpoint(seen))
    const { code, stderr, stdout, out } = await liveBench(server.url, [])
    expect(seen.length).toBe(6)
    expect(seen.every((header) => header === undefined)).toBe(true)
    expect(code).toBe(exitCode.denied)
    expect(stderr).toContain(
      'kinfctl bench: every request failed (6 of 6); the first: HTTP 401: Incorrect API key provided.',
    )
    // The report is still written, and says the same.
    expect(stdout).toContain(
      '6 of 6 requests failed; the first: HTTP 401: Incorrect API key provided.',
    )
    expect(report(out).benchmarks[0]?.first_error).toBe('HTTP 401: Incorrect API key provided.')
  })

  it('a wrong --api-key is sent as a bearer token and refused the same way', async () => {
    const seen: (string | undefined)[] = []
    server = await startLocalHttpServer(chatEndpoint(seen))
    const { code, stderr } = await liveBench(server.url, ['--api-key', 'kinf_wrong'])
    expect(seen[0]).toBe('Bearer kinf_wrong')
    expect(code).toBe(exitCode.denied)
    expect(stderr).toContain('HTTP 401: Incorrect API key provided.')
  })

  it('with the right --api-key every request is served', async () => {
    const seen: (string | undefined)[] = []
    server = await startLocalHttpServer(chatEndpoint(seen))
    const { code, stderr, stdout, out } = await liveBench(server.url, ['--api-key', key])
    expect(stderr).not.toContain('kinfctl bench:')
    expect(code).toBe(exitCode.ok)
    expect(seen).toEqual(Array(6).fill(`Bearer ${key}`))
    const [entry] = report(out).benchmarks
    expect(entry?.metrics.request_totals).toMatchObject({ successful: 6, errored: 0, total: 6 })
    expect(entry?.first_error).toBeNull()
    expect(stdout).not.toContain('failed')
  })

  it('takes the key from KINFERENCE_API_KEY; --api-key wins over it', async () => {
    const seen: (string | undefined)[] = []
    server = await startLocalHttpServer(chatEndpoint(seen))
    const fromEnv = await liveBench(server.url, [], { KINFERENCE_API_KEY: key })
    expect(fromEnv.code).toBe(exitCode.ok)
    expect(seen.every((header) => header === `Bearer ${key}`)).toBe(true)
    seen.length = 0
    const overridden = await liveBench(server.url, ['--api-key', 'kinf_wrong'], {
      KINFERENCE_API_KEY: key,
    })
    expect(overridden.code).toBe(exitCode.denied)
    expect(seen.every((header) => header === 'Bearer kinf_wrong')).toBe(true)
  })

  it('some requests failed: exits 0, and the report gives the count and the first error', async () => {
    const seen: (string | undefined)[] = []
    server = await startLocalHttpServer(chatEndpoint(seen, 3))
    const { code, stdout, out } = await liveBench(server.url, ['--api-key', key])
    expect(code).toBe(exitCode.ok)
    expect(stdout).toContain('2 of 6 requests failed; the first: HTTP 500: the pod fell over')
    const markdown = readFileSync(join(out, 'benchmarks.md'), 'utf8')
    expect(markdown).toContain(
      '- edge at concurrent@2: 2 of 6 requests failed; the first: HTTP 500: the pod fell over',
    )
    expect(report(out).benchmarks[0]?.metrics.request_totals).toMatchObject({
      successful: 4,
      errored: 2,
    })
  })

  it('an unreachable target: every request failed, exit 5 (retry later)', async () => {
    server = await startLocalHttpServer(() => {})
    const url = server.url
    await server.close()
    server = null
    const { code, stderr } = await liveBench(url, [])
    expect(code).toBe(exitCode.unavailable)
    expect(stderr).toMatch(/every request failed \(\d+ of \d+\); the first: .*ECONNREFUSED/)
  })

  it('--api-key without --target is a usage error', async () => {
    const { code, stderr } = await runCli([
      'bench',
      '--mode',
      'live',
      '--data',
      'prompt_tokens=16,output_tokens=2',
      '--rate',
      '2',
      '--api-key',
      key,
    ])
    expect(code).toBe(exitCode.usage)
    expect(stderr).toContain('--api-key needs --target')
  })
})
