import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { parseEdgeOptions } from '../../../control-plane/kinfctl/commands/edge.ts'
import type { EmbeddedStack } from '../../../control-plane/lab/embedded/start-embedded.ts'
import { start } from '../../support/embedded-stack.ts'

const model = 'qwen3.8-27b-fp8'
let stack: EmbeddedStack | null = null
afterEach(async () => {
  await stack?.close()
  stack = null
})

/** A stream through the edge, past its first chunk: the rest is read by `rest()`. */
async function openStream(edgeUrl: string, key: string, maxTokens: number) {
  const response = await fetch(`${edgeUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: [{ role: 'user', content: 'Tell me a long story.' }],
      max_tokens: maxTokens,
      ignore_eos: true,
      stream: true,
    }),
  })
  expect(response.status).toBe(200)
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let text = decoder.decode((await reader.read()).value)
  return {
    /** Everything until the end; `cut` when the connection broke instead. */
    async rest(): Promise<{ text: string; cut: boolean }> {
      try {
        for (;;) {
          const { value, done } = await reader.read()
          if (done) return { text, cut: false }
          text += decoder.decode(value, { stream: true })
        }
      } catch {
        return { text, cut: true }
      }
    },
  }
}

const refused = (url: string) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(Number(new URL(url).port), new URL(url).hostname)
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'))
  })

describe('the Node edge draining on close', () => {
  it('refuses new connections and lets a stream in flight finish before it closes', async () => {
    stack = await start({ timeScale: 1 })
    const stream = await openStream(stack.edge.url, stack.demoKey, 150)
    let closed = false
    const closing = stack.edge.close({ drainMs: 30_000 }).then(() => {
      closed = true
    })
    expect(await refused(stack.edge.url)).toBe(true)
    const { text, cut } = await stream.rest()
    expect(cut).toBe(false)
    expect(text).toContain('data: [DONE]')
    expect(text).toContain('"finish_reason":"length"')
    await closing
    expect(closed).toBe(true)
  })

  it('cuts what is still in flight at the deadline, and closes', async () => {
    stack = await start({ timeScale: 1 })
    const stream = await openStream(stack.edge.url, stack.demoKey, 20_000)
    await stack.edge.close({ drainMs: 300 })
    const { text, cut } = await stream.rest()
    expect(text).not.toContain('data: [DONE]')
    expect(cut).toBe(true)
  })

  it('kinfctl edge takes --drain-timeout (30 s by default)', () => {
    const env = { KINFERENCE_SIGNING_SECRET: 'a-signing-secret-0123456789' }
    const base = ['--scorer', 'http://127.0.0.1:9000', '--config', 'snapshot.json']
    expect(parseEdgeOptions(base, env).drainTimeoutMs).toBe(30_000)
    expect(parseEdgeOptions([...base, '--drain-timeout', '5s'], env).drainTimeoutMs).toBe(5_000)
    expect(parseEdgeOptions([...base, '--drain-timeout', '0'], env).drainTimeoutMs).toBe(0)
    expect(() => parseEdgeOptions([...base, '--drain-timeout', 'soon'], env)).toThrow(
      /--drain-timeout/,
    )
  })
})
