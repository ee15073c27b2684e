import { describe, expect, it } from 'vitest'
import { limitEventStream, type StreamCut } from '../../../workers/app/limit-event-stream.ts'

const encoder = new TextEncoder()

/**
 * An SSE source with a chunk a millisecond after each ask, without end (a timer, so the
 * limits' timers get their turn as with a real upstream); counts pulls and cancels.
 */
function endlessSource() {
  const seen = { pulls: 0, cancelled: false }
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((resolve) => setTimeout(resolve, 1))
      seen.pulls++
      controller.enqueue(encoder.encode(`data: {"n":${seen.pulls}}\n\n`))
    },
    cancel() {
      seen.cancelled = true
    },
  })
  const response = new Response(body, { headers: { 'content-type': 'text/event-stream' } })
  return { response, seen }
}

describe('limitEventStream', () => {
  it('ends a stream at maxStreamSeconds with an error event and [DONE], cancelling the source', async () => {
    const { response, seen } = endlessSource()
    const cuts: StreamCut[] = []
    const limited = limitEventStream(
      response,
      { maxStreamSeconds: 0.2, streamStallSeconds: 5 },
      { nowMs: () => performance.now(), onCut: (why) => cuts.push(why) },
    )
    const text = await limited.text()
    const events = text.trimEnd().split('\n\n')
    expect(events.at(-1)).toBe('data: [DONE]')
    expect(JSON.parse((events.at(-2) ?? '').slice(6))).toMatchObject({
      error: { code: 'stream_duration_exceeded', type: 'server_error' },
    })
    expect(seen.cancelled).toBe(true)
    expect(cuts).toEqual(['duration'])
  })

  it('pulls nothing more while its reader reads nothing, then cuts it after the stall limit', async () => {
    const { response, seen } = endlessSource()
    const cuts: StreamCut[] = []
    const limited = limitEventStream(
      response,
      { maxStreamSeconds: 60, streamStallSeconds: 0.3 },
      { nowMs: () => performance.now(), onCut: (why) => cuts.push(why) },
    )
    const reader = limited.body?.getReader()
    if (!reader) throw new Error('no body')
    await reader.read() // one chunk taken, then the client stops reading
    await expect.poll(() => cuts, { timeout: 5_000 }).toEqual(['stall'])
    // Backpressure held the source: a few chunks at most, not one per tick of the wait.
    expect(seen.pulls).toBeLessThanOrEqual(4)
    expect(seen.cancelled).toBe(true)
    await expect(reader.read()).rejects.toThrow(/stopped reading/)
  })

  it('passes a JSON answer through untouched', async () => {
    const json = Response.json({ ok: true })
    expect(
      limitEventStream(
        json,
        { maxStreamSeconds: 1, streamStallSeconds: 1 },
        { nowMs: () => 0, onCut: () => {} },
      ),
    ).toBe(json)
  })
})
