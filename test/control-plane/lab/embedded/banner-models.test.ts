import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { upCommand } from '../../../../control-plane/lab/commands/up.ts'
import { until } from '../../../support/scorer-stack.ts'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kinf-banner-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

/** The demo's embedding model, served on /v1/embeddings by its pooling pool. */
const embeddingModel = 'qwen3-embedding-0.6b'

/** The model names the banner's "Models:" lines list (up to "Labels:"), without their notes. */
function bannerModels(banner: string): string[] {
  const at = banner.indexOf('Models: ')
  const end = banner.indexOf('Labels:', at)
  if (at < 0 || end < 0) return []
  return banner
    .slice(at + 'Models: '.length, end)
    .replace(/\s+/g, ' ')
    .replace(/ \([^)]*\)/g, '')
    .trim()
    .replace(/\.$/, '')
    .split(', ')
    .filter((name) => name !== '')
}

describe('the npm start banner', () => {
  it('lists only models the demo policy serves: each answers 200 through the edge', async () => {
    let out = ''
    let interrupt = () => {}
    const exited = upCommand(
      [
        ...['--port', '0', '--metrics-port', 'off', '--scorer-metrics-port', 'off'],
        ...['--pods', '1', '--time-scale', '50', '--snapshot', join(dir, 'snapshot.json')],
      ],
      {
        stdout: (text) => {
          out += text
        },
        stderr: () => {},
        readStdin: async () => '',
        untilInterrupted: () => new Promise<void>((resolve) => (interrupt = resolve)),
        env: {},
      },
    )
    try {
      await until(() => out.includes('Ctrl-C stops everything.'), 60_000)
      const edge = /^ {2}edge {5}(http:\/\/\S+)\/v1 /m.exec(out)?.[1]
      const key = /^ {2}api key {2}(\S+)$/m.exec(out)?.[1]
      const models = bannerModels(out)
      expect(models).toEqual(
        expect.arrayContaining([
          'qwen3.8-27b-fp8',
          'gpt-4o',
          'auto',
          'claude-sonnet',
          embeddingModel,
        ]),
      )
      for (const model of models) {
        // The embedding model answers on its own API; every other one is a chat model.
        const [path, body] =
          model === embeddingModel
            ? ['embeddings', { model, input: 'hi' }]
            : [
                'chat/completions',
                { model, max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] },
              ]
        const response = await fetch(`${edge}/v1/${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}` },
          body: JSON.stringify(body),
        })
        expect(response.status, `${model}: ${await response.text()}`).toBe(200)
      }
      // Without Redis, inspect has nothing to read: the banner says what it needs.
      expect(out).toContain('kinfctl inspect reads the shared state in Redis: start with REDIS_URL')
    } finally {
      interrupt()
      expect(await exited).toBe(0)
    }
  }, 90_000)
})
