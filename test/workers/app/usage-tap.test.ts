import { describe, expect, it } from 'vitest'
import { type MeteredStream, observeSseUsage, tapSseUsage } from '../../../workers/app/usage-tap.ts'

const encoder = new TextEncoder()

/** A stream of these SSE events that then fails, as a body does when its upstream dies. */
function breaking(events: string[]): ReadableStream<Uint8Array> {
  let sent = 0
  return new ReadableStream({
    pull(controller) {
      const event = events[sent++]
      if (event === undefined) controller.error(new TypeError('terminated'))
      else controller.enqueue(encoder.encode(`data: ${event}\n\n`))
    },
  })
}

async function readAll(body: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(body).text()
}

const token = JSON.stringify({ choices: [{ index: 0, delta: { content: 'Hi' } }] })

describe('tapSseUsage', () => {
  it('ends a stream whose upstream broke with an error event and [DONE]', async () => {
    let ended = 0
    const text = await readAll(
      tapSseUsage(breaking([token]), {
        dropUsageChunk: false,
        stripChunkUsage: true,
        onEnd: () => ended++,
      }),
    )
    const events = text.trim().split('\n\n')
    expect(events[0]).toBe(`data: ${token}`)
    expect(JSON.parse((events[1] ?? '').slice(6)).error).toMatchObject({
      type: 'server_error',
      code: 'upstream_error',
    })
    expect(events[2]).toBe('data: [DONE]')
    expect(ended).toBe(1)
  })

  it('adds nothing when the upstream broke after [DONE]', async () => {
    const text = await readAll(
      tapSseUsage(breaking([token, '[DONE]']), {
        dropUsageChunk: false,
        stripChunkUsage: true,
        onEnd: () => {},
      }),
    )
    expect(text).toBe(`data: ${token}\n\ndata: [DONE]\n\n`)
  })
})

describe('tapSseUsage over CR LF', () => {
  it('reads the usage of a stream framed with CR LF, even split between chunks', async () => {
    const usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }
    const text = `data: ${token}\r\n\r\ndata: ${JSON.stringify({ choices: [], usage })}\r\n\r\ndata: [DONE]\r\n\r\n`
    const cut = text.indexOf('\r\n\r\ndata: [DONE]') + 1
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(text.slice(0, cut)))
        controller.enqueue(encoder.encode(text.slice(cut)))
        controller.close()
      },
    })
    let seen: unknown = null
    const out = await readAll(
      tapSseUsage(body, {
        dropUsageChunk: true,
        stripChunkUsage: true,
        onEnd: (found) => (seen = found.usage),
      }),
    )
    expect(seen).toMatchObject({ total_tokens: 7 })
    expect(out).toBe(`data: ${token}\n\ndata: [DONE]\n\n`)
  })
})

describe('tapSseUsage with usage on every chunk (continuous_usage_stats)', () => {
  const stream = (events: string[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(events.map((e) => `data: ${e}\n\n`).join('')))
        controller.close()
      },
    })
  const running = (n: number) => ({ prompt_tokens: 9, total_tokens: 9 + n, completion_tokens: n })
  const chunks = [
    // vLLM's order: usage last, cached tokens nested.
    { id: 'a', choices: [{ index: 0, delta: { content: 'Hi {x}' } }], usage: running(1) },
    // Any other order, and a string in usage: read back whole.
    {
      usage: { ...running(2), note: '}' },
      id: 'a',
      choices: [{ index: 0, delta: { content: ' there' } }],
    },
    {
      id: 'a',
      choices: [{ index: 0, delta: {} }],
      usage: { ...running(2), prompt_tokens_details: { cached_tokens: 4 } },
    },
  ]
  const final = { id: 'a', choices: [], usage: running(2) }

  it('removes usage the client did not ask for, leaving each chunk otherwise as it was', async () => {
    let metered: unknown = null
    const out = await readAll(
      tapSseUsage(
        stream(
          [...chunks, final, '[DONE]'].map((c) => (typeof c === 'string' ? c : JSON.stringify(c))),
        ),
        {
          dropUsageChunk: true,
          stripChunkUsage: true,
          onEnd: (seen) => (metered = seen),
        },
      ),
    )
    const events = out.trim().split('\n\n')
    expect(events).toHaveLength(chunks.length + 1)
    chunks.forEach((chunk, i) => {
      const { usage: _, ...rest } = chunk
      expect(JSON.parse((events[i] ?? '').slice(6))).toEqual(rest)
    })
    expect(events.at(-1)).toBe('data: [DONE]')
    expect(metered).toMatchObject({ complete: true, usage: { total_tokens: 11 }, textEvents: 2 })
  })

  it('keeps it for a client that asked for it, and counts what a cut stream used', async () => {
    let metered: { complete: boolean; usage: unknown } | null = null
    const out = await readAll(
      tapSseUsage(stream(chunks.slice(0, 1).map((c) => JSON.stringify(c))), {
        dropUsageChunk: false,
        stripChunkUsage: false,
        onEnd: (seen) => (metered = seen),
      }),
    )
    expect(out).toContain('"usage"')
    expect(metered).toMatchObject({ complete: false, usage: { total_tokens: 10 } })
  })
})

describe('observeSseUsage (the edge metrics’ watch on what the client gets)', () => {
  const events = [
    '{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}',
    '{"choices":[{"index":0,"delta":{"content":"a"}}]}',
    '{"choices":[{"index":0,"delta":{"content":"b"}}]}',
    '{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}',
  ]

  it('passes the bytes on as they came, and sees the first text and the usage', async () => {
    const bytes = encoder.encode(
      `${events.map((e) => `data: ${e}\r\n\r\n`).join('')}data: [DONE]\r\n\r\n`,
    )
    const calls: string[] = []
    let seen: MeteredStream | null = null
    const body = new Blob([bytes]).stream()
    const observed = observeSseUsage(body, {
      onFirstText: () => calls.push('first text'),
      onEnd: (metered) => {
        calls.push('end')
        seen = metered
      },
    })
    expect(new Uint8Array(await new Response(observed).arrayBuffer())).toEqual(bytes)
    expect(calls).toEqual(['first text', 'end'])
    expect(seen).toMatchObject({ complete: true, textEvents: 2, usage: { prompt_tokens: 5 } })
  })

  it('errors when its body errors (a stalled client is cut, not ended in words)', async () => {
    let ended = 0
    const observed = observeSseUsage(breaking(events.slice(0, 2)), {
      onEnd: () => {
        ended++
      },
    })
    await expect(readAll(observed)).rejects.toThrow('terminated')
    expect(ended).toBe(1)
  })
})
