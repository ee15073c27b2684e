import { describe, expect, it } from 'vitest'
import { AnswerMeter } from '../../../../control-plane/scorer/serving/answer-meter.ts'

// What the scorer reads of a pod's JSON answer: a chat's usage as before; an embeddings
// answer's usage (prompt tokens only, after its vectors) however long its vectors run.

/** An embeddings answer as vLLM writes it, `inputs` vectors of `size` floats, in chunks. */
function embeddingsAnswer(inputs: number, size: number, usage: object): Buffer[] {
  const vector = Array.from({ length: size }, (_, i) => Math.sin(i) / 7)
  const data = Array.from({ length: inputs }, (_, index) => ({
    index,
    object: 'embedding',
    embedding: vector,
  }))
  const text = JSON.stringify({ id: 'embd-1', object: 'list', model: 'm', data, usage })
  const bytes = Buffer.from(text)
  const chunks: Buffer[] = []
  for (let at = 0; at < bytes.length; at += 65_536) chunks.push(bytes.subarray(at, at + 65_536))
  return chunks
}

function metered(meter: AnswerMeter, chunks: Buffer[]) {
  for (const chunk of chunks) meter.add(chunk)
  return meter.ended()
}

describe('the answer meter', () => {
  it('reads an embeddings answer’s usage as seen by its prompt tokens, a chat’s by its completion tokens', () => {
    const chunks = embeddingsAnswer(2, 8, { prompt_tokens: 17, total_tokens: 17 })
    expect(metered(new AnswerMeter(false, 'embeddings'), chunks)).toEqual({
      usageSeen: true,
      cachedTokens: null,
      promptTokens: 17,
      generatedTokens: 0,
    })
    // A chat answer's usage counts as seen only with its completion tokens, as before.
    const chat = (usage: object) => [Buffer.from(JSON.stringify({ id: 'c', usage }))]
    expect(
      metered(new AnswerMeter(false), chat({ prompt_tokens: 5, completion_tokens: 3 })),
    ).toEqual({ usageSeen: true, cachedTokens: null, promptTokens: 5, generatedTokens: 3 })
    expect(metered(new AnswerMeter(false), chat({ prompt_tokens: 5 }))).toMatchObject({
      usageSeen: false,
      promptTokens: 5,
    })
  })

  it('reads the usage after vectors far past the 4 MiB kept of a chat answer', () => {
    const usage = { prompt_tokens: 90_000, total_tokens: 90_000, completion_tokens: 0 }
    const chunks = embeddingsAnswer(300, 1024, usage)
    expect(chunks.reduce((sum, chunk) => sum + chunk.length, 0)).toBeGreaterThan(5 * 1024 * 1024)
    expect(metered(new AnswerMeter(false, 'embeddings'), chunks)).toMatchObject({
      usageSeen: true,
      promptTokens: 90_000,
      generatedTokens: 0,
    })
  })
})
