import { describe, expect, it } from 'vitest'
import { createChatStreamParser } from '../../../../control-plane/lab/bench/create-chat-stream-parser.ts'
import { createChunkWriter, usage } from '../../../../control-plane/lab/sim/generation-response.ts'

/** A vLLM-shaped stream, written by the simulator's own chunk writer. */
function vllmStream(pieces: string[], cached: number): string {
  const writer = createChunkWriter('chat', 'chatcmpl-1', 1, 'm')
  let text = writer.role()
  pieces.forEach((piece, i) => {
    text += writer.token(piece, i === pieces.length - 1 ? 'length' : null, null)
  })
  return text + writer.usage(usage(40, pieces.length, cached)) + writer.done()
}

describe('createChatStreamParser', () => {
  it('reads a vLLM stream: one token per content chunk, the text, usage, [DONE]', () => {
    const parser = createChatStreamParser()
    parser.push(vllmStream(['the', ' model', ' is', ' "quoted"\\ é\n'], 32), 7)
    parser.end(9)
    expect(parser.state).toEqual({
      tokenTimesMs: [7, 7, 7, 7],
      pieces: ['the', ' model', ' is', ' "quoted"\\ é\n'],
      usage: usage(40, 4, 32),
      error: null,
      done: true,
    })
  })

  it('gives the same result whatever the stream is cut into, with each piece’s arrival time', () => {
    const stream = vllmStream(['alpha', ' beta', ' gamma', ' 💡'], 0)
    for (const size of [1, 2, 3, 7, 64]) {
      const parser = createChatStreamParser()
      for (let at = 0; at < stream.length; at += size) parser.push(stream.slice(at, at + size), at)
      parser.end(stream.length)
      expect(parser.state.pieces.join('')).toBe('alpha beta gamma 💡')
      expect(parser.state.usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 4 })
      expect(parser.state.done).toBe(true)
      // Each token is stamped with the read that completed its event (the blank line).
      const ends = [...stream.matchAll(/"content":"[^"]+"[^\n]*\n\n/g)].map(
        (m) => Math.floor(((m.index ?? 0) + m[0].length - 1) / size) * size,
      )
      expect(parser.state.tokenTimesMs).toEqual(ends)
    }
  })

  it('reads other servers’ shapes (spaces, other key orders, CRLF) by parsing them', () => {
    const parser = createChatStreamParser()
    const events = [
      'data: {"choices": [{"delta": {"role": "assistant"}, "index": 0}]}',
      'data: {"choices": [{"index": 0, "delta": {"content": "Hi"}}]}',
      'data: {"choices":[{"delta":{"reasoning_content":"hmm","content":null}}]}',
      'data: {"choices":[{"delta":{"content":""}}]}',
      ': a comment',
      'event: message\r\ndata: {"choices":[{"delta":{"role":"assistant","content":" there"}}]}',
      'data: {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}',
      'data: [DONE]',
    ]
    parser.push(`${events.join('\r\n\r\n')}\r\n\r\n`, 1)
    parser.end(2)
    expect(parser.state.pieces).toEqual(['Hi', ' there'])
    expect(parser.state.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 2 })
    expect(parser.state.done).toBe(true)
    expect(parser.state.error).toBeNull()
  })

  it('dispatches a last event that has no blank line after it', () => {
    const parser = createChatStreamParser()
    parser.push('data: {"choices":[{"delta":{"content":"x"}}]}', 1)
    parser.end(2)
    expect(parser.state.tokenTimesMs).toEqual([2])
    expect(parser.state.done).toBe(false)
  })

  it('records an error event, as vLLM and the scorer send when a stream breaks', () => {
    const writer = createChunkWriter('chat', 'c', 1, 'm')
    const parser = createChatStreamParser()
    parser.push(writer.role() + writer.token('a', null, null), 1)
    parser.push(writer.error(500, 'the pod was killed') + writer.done(), 2)
    parser.end(3)
    expect(parser.state.error).toBe('the pod was killed')
    expect(parser.state.tokenTimesMs).toEqual([1])
  })

  it('does not take a token whose text is "error" or "usage" for structure', () => {
    const parser = createChatStreamParser()
    parser.push(
      'data: {"choices":[{"delta":{"content":"error"}}]}\n\ndata: {"choices":[{"delta":{"content":"\\"usage\\":{"}}]}\n\n',
      1,
    )
    parser.end(2)
    expect(parser.state.pieces).toEqual(['error', '"usage":{'])
    expect(parser.state.error).toBeNull()
    expect(parser.state.usage).toBeNull()
  })

  it('reports an unparsable event as an error instead of throwing', () => {
    const parser = createChatStreamParser()
    parser.push('data: {"choices":[{"delta":\n\n', 1)
    expect(parser.state.error).toMatch(/unparsable stream event/)
    const escapes = createChatStreamParser()
    expect(() =>
      escapes.push('data: {"choices":[{"delta":{"content":"bad \\x escape"}}]}\n\n', 1),
    ).not.toThrow()
    expect(escapes.state.error).toMatch(/unparsable stream event/)
    expect(escapes.state.tokenTimesMs).toEqual([])
  })
})
