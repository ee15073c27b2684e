import { describe, expect, it } from 'vitest'
import { parsePrometheusText } from '../../../control-plane/metrics/parse-prometheus-text.ts'
import { PrometheusParseResult } from '../../../control-plane/metrics/prometheus-sample.ts'

describe('parsePrometheusText', () => {
  it('reads samples, labels, special values and timestamps; skips comments and blank lines', () => {
    const body = [
      '# HELP vllm:num_requests_running Number of requests in model execution batches.',
      '# TYPE vllm:num_requests_running gauge',
      'vllm:num_requests_running{engine="0",model_name="m"} 3.0',
      '',
      '# a comment that is neither HELP nor TYPE',
      '   # TYPE up untyped',
      'up 1',
      'esc{path="C:\\\\dir",quote="say \\"hi\\"",nl="a\\nb"} -2.5e-3',
      'spaced { a = "1" , b="2", } 7 1712345678901',
      'tight{a="x"}8',
      'nan_value NaN',
      'inf_values{s="+"} +Inf',
      'inf_values{s="-"} -Inf',
      'inf_values{s="bare"} Inf',
      'crlf 4\r',
      'negative_stamp 5 -1000',
      '\t',
    ].join('\n')
    const result = parsePrometheusText(body)
    expect(result.errors).toEqual([])
    expect(result.truncated).toBe(false)
    expect([...result.types]).toEqual([
      ['vllm:num_requests_running', 'gauge'],
      ['up', 'untyped'],
    ])
    expect(result.samples).toEqual([
      { name: 'vllm:num_requests_running', labels: { engine: '0', model_name: 'm' }, value: 3 },
      { name: 'up', labels: {}, value: 1 },
      {
        name: 'esc',
        labels: { path: 'C:\\dir', quote: 'say "hi"', nl: 'a\nb' },
        value: -0.0025,
      },
      { name: 'spaced', labels: { a: '1', b: '2' }, value: 7, timestampMs: 1712345678901 },
      { name: 'tight', labels: { a: 'x' }, value: 8 },
      { name: 'nan_value', labels: {}, value: Number.NaN },
      { name: 'inf_values', labels: { s: '+' }, value: Number.POSITIVE_INFINITY },
      { name: 'inf_values', labels: { s: '-' }, value: Number.NEGATIVE_INFINITY },
      { name: 'inf_values', labels: { s: 'bare' }, value: Number.POSITIVE_INFINITY },
      { name: 'crlf', labels: {}, value: 4 },
      { name: 'negative_stamp', labels: {}, value: 5, timestampMs: -1000 },
    ])
    expect(() => PrometheusParseResult.parse(result)).not.toThrow()
  })

  it('reports each bad line with its number and goes on', () => {
    const lines = [
      'good_before 1',
      'no_value',
      'bad_escape{a="\\t"} 1',
      'unterminated{a="x} 1',
      'twice{a="1",a="2"} 1',
      'not_a_number abc',
      'too_big 1e400',
      'fractional_stamp 1 1.5',
      'trailing 1 2 3',
      'dash-name 1',
      'digit{0a="x"} 1',
      'missing_eq{a "x"} 1',
      'missing_comma{a="1" b="2"} 1',
      '# TYPE some_metric colour',
      '# TYPE repeated counter',
      '# TYPE repeated gauge',
      '# HELP 9bad text',
      '{a="1"} 1',
      'hex 0x1p-2',
      'good_after 2',
    ]
    const result = parsePrometheusText(lines.join('\n'))
    expect(result.samples.map((sample) => sample.name)).toEqual(['good_before', 'good_after'])
    expect(result.errors.map((error) => error.line)).toEqual([
      2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 18, 19,
    ])
    expect(result.errorCount).toBe(17)
    expect(result.errors.slice(0, 4)).toEqual([
      { line: 2, message: 'column 9: expected a value' },
      { line: 3, message: 'column 15: invalid escape sequence' },
      { line: 4, message: 'column 16: unterminated label value' },
      { line: 5, message: 'column 13: label "a" given twice' },
    ])
    expect(result.errors.find((error) => error.line === 14)?.message).toBe(
      'unknown metric type "colour"',
    )
    expect(result.errors.find((error) => error.line === 16)?.message).toBe(
      'second TYPE line for "repeated"',
    )
    expect(result.types.get('repeated')).toBe('counter')
  })

  it('accepts any label name, __proto__ and constructor included', () => {
    const { samples, errors } = parsePrometheusText('m{__proto__="a",constructor="b"} 1')
    expect(errors).toEqual([])
    expect(Object.entries(samples[0]?.labels ?? {})).toEqual([
      ['__proto__', 'a'],
      ['constructor', 'b'],
    ])
    expect(Object.getPrototypeOf(samples[0]?.labels)).toBe(null)
  })

  describe('hostile input', () => {
    it('reads at most maxBodyLength characters of a 10 MB body, up to a whole line', () => {
      const line = 'vllm:num_requests_running{engine="0",model_name="m"} 1\n'
      const body = line.repeat(Math.ceil((10 * 1024 * 1024) / line.length))
      const result = parsePrometheusText(body, { maxBodyLength: 1024 * 1024 })
      expect(result.truncated).toBe(true)
      expect(result.samples).toHaveLength(Math.floor((1024 * 1024) / line.length))
      expect(result.errors).toEqual([
        {
          line: result.samples.length + 1,
          message: 'body longer than 1048576 characters: the rest is not read',
        },
      ])
    })

    it('skips a line longer than maxLineLength unread, and one 10 MB line reads as nothing', () => {
      const labels = Array.from({ length: 100_000 }, (_, i) => `l${i}="v"`).join(',')
      const result = parsePrometheusText(`before 1\nm{${labels}} 1\nafter 2`)
      expect(result.samples.map((sample) => sample.name)).toEqual(['before', 'after'])
      expect(result.errors).toEqual([
        { line: 2, message: 'line longer than 65536 characters: skipped' },
      ])
      const single = parsePrometheusText('x'.repeat(10 * 1024 * 1024))
      expect(single.samples).toEqual([])
      expect(single.truncated).toBe(true)
      expect(single.errorCount).toBe(1)
    })

    it('rejects a sample with more than maxLabelsPerSample labels', () => {
      const labels = Array.from({ length: 100_000 }, (_, i) => `l${i}="v"`).join(',')
      const result = parsePrometheusText(`m{${labels}} 1`, { maxLineLength: 10_000_000 })
      expect(result.samples).toEqual([])
      expect(result.errors).toEqual([{ line: 1, message: 'more than 64 labels' }])
    })

    it('stops at maxSamples and keeps only maxErrors issues', () => {
      const many = parsePrometheusText('a 1\n'.repeat(50), { maxSamples: 10 })
      expect(many.samples).toHaveLength(10)
      expect(many.truncated).toBe(true)
      expect(many.errors).toEqual([
        { line: 11, message: 'more than 10 samples: the rest is not read' },
      ])
      const noisy = parsePrometheusText('bad line\n'.repeat(5000))
      expect(noisy.errors).toHaveLength(100)
      expect(noisy.errorCount).toBe(5000)
    })

    it('stays linear on long runs of digits and backslashes', () => {
      const digits = parsePrometheusText(`m ${'1'.repeat(60_000)}x`)
      expect(digits.errors[0]?.message).toBe('column 3: invalid value')
      const slashes = parsePrometheusText(`m{a="${'\\\\'.repeat(30_000)}"} 1`)
      expect(slashes.samples[0]?.labels.a).toHaveLength(30_000)
    })
  })
})
