import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import {
  PyFloat,
  parsePythonJson,
  pyFloatRepr,
  pySplit,
  pyStringRepr,
  pyStrip,
} from '../../../../../control-plane/lab/sim/model/python-json.ts'

/** What Python itself prints for each expression (the reference, computed here). */
function python(expressions: string[]): string[] {
  const script = `import json, sys\nfor e in json.load(sys.stdin): print(json.dumps(eval(e)))`
  const out = spawnSync('python3', ['-c', script], {
    input: JSON.stringify(expressions),
    encoding: 'utf8',
  })
  if (out.status !== 0) throw new Error(out.stderr)
  return out.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as string)
}

describe('Python-faithful JSON and strings', () => {
  it('reads floats as floats, integers of any size exactly, keys in their order', () => {
    const value = parsePythonJson(
      ' {"b": 1, "a": [1.0, 2, 12345678901234567890, -0.0, 1e400, NaN], "b": 3} ',
    )
    expect(value).toBeInstanceOf(Map)
    const dict = value as Map<string, unknown>
    expect([...dict.keys()]).toEqual(['b', 'a'])
    expect(dict.get('b')).toBe(3)
    const [one, two, big, zero, inf, nan] = dict.get('a') as unknown[]
    expect(one).toEqual(new PyFloat(1))
    expect(two).toBe(2)
    expect(big).toBe(12345678901234567890n)
    expect(Object.is((zero as PyFloat).value, -0)).toBe(true)
    expect((inf as PyFloat).value).toBe(Number.POSITIVE_INFINITY)
    expect(Number.isNaN((nan as PyFloat).value)).toBe(true)
    expect(parsePythonJson('"\\ud83d\\ude00 \\u00e9"')).toBe('😀 é')
    for (const bad of ['', '{', '[1,]', '{"a" 1}', '"\u0001"', 'nul', '1 2'])
      expect(() => parsePythonJson(bad), bad).toThrow(SyntaxError)
  })

  it('prints floats, strings and splits as Python does', () => {
    const floats = [
      1,
      1e16,
      1e15,
      1.2345678901234568e17,
      1e-4,
      1e-5,
      1.5e-7,
      -2.5e300,
      1e5,
      1.1,
      0.1 + 0.2,
      -0,
      5e-324,
    ]
    expect(floats.map(pyFloatRepr)).toEqual(
      python(
        floats.map((f) => `repr(float(${JSON.stringify(Object.is(f, -0) ? '-0.0' : String(f))}))`),
      ),
    )
    const texts = [
      "it's",
      'say "hi"',
      'both \' and "',
      'tab\tnew\nline\r\\',
      'é😀\u200b\x00\x7f\u00a0 \u2028',
    ]
    expect(texts.map(pyStringRepr)).toEqual(python(texts.map((t) => `repr(${JSON.stringify(t)})`)))
    const spaced = ' \u3000\x1c a  b\u00a0c \ufeff\x85'
    expect(pyStrip(spaced, null)).toBe(python([`${JSON.stringify(spaced)}.strip()`])[0])
    expect(pyStrip('\n\nx\n', '\n', 'left')).toBe('x\n')
    expect(pySplit(spaced, null)).toEqual(
      JSON.parse(python([`json.dumps(${JSON.stringify(spaced)}.split())`])[0] as string),
    )
    expect(pySplit('a b  c  ', null, 1)).toEqual(['a', 'b  c  '])
    expect(pySplit('a,b,c', ',', 1)).toEqual(['a', 'b,c'])
  })
})
