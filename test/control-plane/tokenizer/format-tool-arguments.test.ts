import { describe, expect, it } from 'vitest'
import { formatToolArguments } from '../../../control-plane/tokenizer/format-tool-arguments.ts'
import { createSeededRandom as seededRandom } from '../../../shared/random/create-seeded-random.ts'

/**
 * [arguments as the client sends them, what Python prints]: computed with CPython 3.11 as
 * `v = json.loads(s); v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)`,
 * and "{}" where `json.loads` raises, which is what vLLM and Qwen3's template do.
 */
const python: [string, string][] = [
  ['{"a": 1}', '{"a": 1}'],
  [
    '{"x":1.0,"y":1e16,"z":0.00001,"w":-0.0,"v":12345678901234567890}',
    '{"x": 1.0, "y": 1e+16, "z": 1e-05, "w": -0.0, "v": 12345678901234567890}',
  ],
  ['{"b":2,"a":1,"2":3,"b":4}', '{"b": 4, "a": 1, "2": 3}'],
  ['', '{}'],
  ['not json', '{}'],
  ['"plain"', 'plain'],
  ['[1, 2.5, true, null]', '[1, 2.5, true, null]'],
  [
    '  {"s" : "\\ud83d\\ude00\\u00e9\\n\\u0001\\"\\\\/"}  ',
    '{"s": "\ud83d\ude00\u00e9\\n\\u0001\\"\\\\/"}',
  ],
  ['5', '5'],
  ['-0', '0'],
  ['NaN', 'NaN'],
  ['[Infinity, -Infinity, 1e400]', '[Infinity, -Infinity, Infinity]'],
  [
    '{"f": 1234567890123456.0, "g": 0.0001, "h": 1.5e-7, "i": 123e-2, "j": 1E+2}',
    '{"f": 1234567890123456.0, "g": 0.0001, "h": 1.5e-07, "i": 1.23, "j": 100.0}',
  ],
  ['{"a":1,}', '{}'],
  ['[01]', '{}'],
  ['{"a":"x\ty"}', '{}'],
  ['{"a": "\u00e9\u20ac\ud83d\ude00\u2028"}', '{"a": "\u00e9\u20ac\ud83d\ude00\u2028"}'],
  ['\ufeff{}', '{}'],
  ['{} {}', '{}'],
  ['0.1', '0.1'],
  [
    '[1e22, 1e21, 9007199254740993, 2.5e-5, 100.0, 3.0e0]',
    '[1e+22, 1e+21, 9007199254740993, 2.5e-05, 100.0, 3.0]',
  ],
]

describe('formatToolArguments', () => {
  it.each(python)('prints %j as Python does', (argumentsJson, expected) => {
    expect(formatToolArguments(argumentsJson)).toBe(expected)
  })

  it('prints any float as Python repr does', () => {
    // Python's repr: the shortest round-trip digits (as JavaScript's), written in
    // exponent form when the decimal point falls before the 4th zero or after 16 digits.
    const random = seededRandom(3)
    for (let i = 0; i < 2000; i++) {
      const value = (random() - 0.5) * 10 ** Math.floor(random() * 50 - 25)
      const printed = formatToolArguments(`[${value.toExponential()}]`).slice(1, -1)
      expect(Number(printed)).toBe(value)
      const exponent = Math.floor(Math.log10(Math.abs(value)))
      if (exponent >= 16 || exponent < -4) expect(printed).toMatch(/^-?\d(\.\d+)?e[-+]\d\d+$/)
      else expect(printed).toMatch(/^-?\d+\.\d+$/)
    }
  })
})
