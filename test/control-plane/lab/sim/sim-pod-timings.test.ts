import { afterEach, describe, expect, it } from 'vitest'
import { model, text, usePods } from '../../../support/sim-pods.ts'

const { pod } = usePods(afterEach)

describe("a simulated pod's own time to first token", () => {
  it('is kept by request id for streams and whole answers, and given once', async () => {
    const target = await pod()
    const send = (requestId: string, stream: boolean) =>
      fetch(`${target.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify({
          model,
          messages: [{ role: 'user', content: text(7, 40) }],
          max_tokens: 4,
          stream,
        }),
      }).then((response) => response.text())
    await send('timed-stream', true)
    await send('timed-whole', false)
    const take = async () =>
      (
        (await (await fetch(`${target.url}/admin/timings/take`, { method: 'POST' })).json()) as {
          timings: { requestId: string; ttftMs: number }[]
        }
      ).timings
    const timings = await take()
    expect(timings.map((t) => t.requestId).sort()).toEqual(['timed-stream', 'timed-whole'])
    for (const timing of timings) expect(timing.ttftMs).toBeGreaterThan(0)
    expect(await take()).toEqual([])
  })
})
