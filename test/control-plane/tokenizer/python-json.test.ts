import { describe, expect, it } from 'vitest'
import { dumpJson } from '../../../control-plane/tokenizer/python-json.ts'
import {
  JsonSyntaxError,
  readPythonJson,
} from '../../../control-plane/tokenizer/read-python-json.ts'
import { toValue } from '../../../control-plane/tokenizer/template-values.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { createSeededRandom as seededRandom } from '../../../shared/random/create-seeded-random.ts'

/**
 * [JSON text, json.dumps(json.loads(text), ensure_ascii=False), the same with
 * indent=2 and sort_keys=True]: computed with CPython 3.11 (python3 on Debian).
 */
const python: [string, string, string][] = [
  ['{"a": 1}', '{"a": 1}', '{\n  "a": 1\n}'],
  [
    '{"x":1.0,"y":1e16,"z":0.00001,"w":-0.0,"v":12345678901234567890}',
    '{"x": 1.0, "y": 1e+16, "z": 1e-05, "w": -0.0, "v": 12345678901234567890}',
    '{\n  "v": 12345678901234567890,\n  "w": -0.0,\n  "x": 1.0,\n  "y": 1e+16,\n  "z": 1e-05\n}',
  ],
  ['{"b":2,"a":1,"2":3,"b":4}', '{"b": 4, "a": 1, "2": 3}', '{\n  "2": 3,\n  "a": 1,\n  "b": 4\n}'],
  ['"plain"', '"plain"', '"plain"'],
  ['[1, 2.5, true, null]', '[1, 2.5, true, null]', '[\n  1,\n  2.5,\n  true,\n  null\n]'],
  [
    '  {"s" : "\\ud83d\\ude00\\u00e9\\n\\u0001\\"\\\\/"}  ',
    '{"s": "\ud83d\ude00\u00e9\\n\\u0001\\"\\\\/"}',
    '{\n  "s": "\ud83d\ude00\u00e9\\n\\u0001\\"\\\\/"\n}',
  ],
  ['-0', '0', '0'],
  ['NaN', 'NaN', 'NaN'],
  [
    '[Infinity, -Infinity, 1e400]',
    '[Infinity, -Infinity, Infinity]',
    '[\n  Infinity,\n  -Infinity,\n  Infinity\n]',
  ],
  [
    '{"f": 1234567890123456.0, "g": 0.0001, "h": 1.5e-7, "i": 123e-2, "j": 1E+2}',
    '{"f": 1234567890123456.0, "g": 0.0001, "h": 1.5e-07, "i": 1.23, "j": 100.0}',
    '{\n  "f": 1234567890123456.0,\n  "g": 0.0001,\n  "h": 1.5e-07,\n  "i": 1.23,\n  "j": 100.0\n}',
  ],
  [
    '[1e22, 9007199254740993, 3.0e0, {}, []]',
    '[1e+22, 9007199254740993, 3.0, {}, []]',
    '[\n  1e+22,\n  9007199254740993,\n  3.0,\n  {},\n  []\n]',
  ],
]

describe('readPythonJson and dumpJson', () => {
  it.each(python)('read %j and print it as Python does', (text, compact, indented) => {
    const value = readPythonJson(text)
    expect(dumpJson(value)).toBe(compact)
    expect(dumpJson(value, { indent: 2, sortKeys: true })).toBe(indented)
  })

  it('refuses what json.loads refuses', () => {
    for (const text of ['', 'not json', '{"a":1,}', '[01]', '{"a":"x\ty"}', '\ufeff{}', '{} {}'])
      expect(() => readPythonJson(text), JSON.stringify(text)).toThrow(JsonSyntaxError)
  })

  it('refuses nesting past Python’s recursion limit as a bad request, not a stack overflow', () => {
    const deep = '['.repeat(5_000) + ']'.repeat(5_000)
    expect(() => readPythonJson(deep)).toThrow(KinfError)
    expect(dumpJson(readPythonJson('['.repeat(900) + ']'.repeat(900))).length).toBe(1800)
  })

  it('escapes as ensure_ascii asks, with the separators given', () => {
    const value = toValue({ k: 'é😀', n: [1, 2] })
    expect(dumpJson(value, { ensureAscii: true })).toBe(
      '{"k": "\\u00e9\\ud83d\\ude00", "n": [1, 2]}',
    )
    expect(dumpJson(value, { separators: [',', ':'] })).toBe('{"k":"é😀","n":[1,2]}')
    expect(() => dumpJson(toValue(undefined))).toThrow(/not JSON serializable/)
  })

  it('prints any float as Python repr does', () => {
    // Python's repr: the shortest round-trip digits (as JavaScript's), written in
    // exponent form when the decimal point falls before the 4th zero or after 16 digits.
    const random = seededRandom(3)
    for (let i = 0; i < 2000; i++) {
      const value = (random() - 0.5) * 10 ** Math.floor(random() * 50 - 25)
      const printed = dumpJson(readPythonJson(`[${value.toExponential()}]`)).slice(1, -1)
      expect(Number(printed)).toBe(value)
      const exponent = Math.floor(Math.log10(Math.abs(value)))
      if (exponent >= 16 || exponent < -4) expect(printed).toMatch(/^-?\d(\.\d+)?e[-+]\d\d+$/)
      else expect(printed).toMatch(/^-?\d+\.\d+$/)
    }
  })
})
