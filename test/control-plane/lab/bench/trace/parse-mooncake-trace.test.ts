import { describe, expect, it } from 'vitest'
import { parseMooncakeTrace } from '../../../../../control-plane/lab/bench/trace/parse-mooncake-trace.ts'
import { KinfError } from '../../../../../shared/errors/kinf-error.ts'

const line = (fields: Record<string, unknown>) =>
  JSON.stringify({ timestamp: 0, input_length: 600, output_length: 4, hash_ids: [0, 1], ...fields })

/** The message of the KinfError parseMooncakeTrace throws for `text`. */
function errorOf(text: string): string {
  try {
    parseMooncakeTrace(text, 't.jsonl')
  } catch (error) {
    expect(error).toBeInstanceOf(KinfError)
    expect((error as KinfError).code).toBe('invalid_request')
    return (error as KinfError).message
  }
  throw new Error(`parsed ${JSON.stringify(text)}`)
}

describe('parseMooncakeTrace', () => {
  it('reads one request a line, skipping blank lines and ignoring extra fields', () => {
    const text = `${line({ extra: 'x' })}\n\n${line({ timestamp: 40, hash_ids: [0, 2] })}\n`
    expect(parseMooncakeTrace(text, 't.jsonl')).toEqual([
      { timestamp: 0, input_length: 600, output_length: 4, hash_ids: [0, 1] },
      { timestamp: 40, input_length: 600, output_length: 4, hash_ids: [0, 2] },
    ])
  })

  it('names the file, the line and the field of a bad line', () => {
    const first = `${line({})}\n`
    expect(errorOf(`${first}{"timestamp": 1,`)).toMatch(/^t\.jsonl:2: not JSON \(/)
    expect(errorOf(`${first}${line({ input_length: undefined })}`)).toMatch(
      /^t\.jsonl:2: input_length: /,
    )
    expect(errorOf(line({ output_length: -3 }))).toMatch(/^t\.jsonl:1: output_length: /)
    expect(errorOf(line({ timestamp: -1 }))).toMatch(/^t\.jsonl:1: timestamp: /)
    expect(errorOf(line({ hash_ids: [0, 1.5] }))).toMatch(/^t\.jsonl:1: hash_ids\[1\]: /)
    expect(errorOf(line({ hash_ids: [0, '1'] }))).toMatch(/^t\.jsonl:1: hash_ids\[1\]: /)
    expect(errorOf('[1, 2]')).toMatch(/^t\.jsonl:1: line: /)
  })

  it('refuses timestamps going backwards, naming both', () => {
    const text = `${line({ timestamp: 50 })}\n${line({ timestamp: 50 })}\n${line({ timestamp: 20 })}`
    expect(errorOf(text)).toBe("t.jsonl:3: timestamp: 20 is before the previous request's 50")
  })

  it('refuses an empty trace', () => {
    expect(errorOf('')).toBe('t.jsonl: the trace has no requests')
    expect(errorOf('\n  \n')).toBe('t.jsonl: the trace has no requests')
  })
})
