import { describe, expect, it } from 'vitest'
import { applyJsonPatch } from './json-patch.ts'
import { evaluateJsonPath } from './json-path.ts'
import { applyMergePatch } from './merge-patch.ts'
import { parseLabelSelector } from './object-selector.ts'
import { humanDuration } from './to-table.ts'

describe('patch, selector, JSONPath and age helpers', () => {
  it('applies RFC 6902 and RFC 7396 patches', () => {
    const doc = { a: { 'b/c': 1, list: [1, 2] }, keep: true }
    expect(
      applyJsonPatch(doc, [
        { op: 'add', path: '/a/list/-', value: 3 },
        { op: 'move', from: '/a/b~1c', path: '/moved' },
        { op: 'copy', from: '/moved', path: '/copied' },
        { op: 'remove', path: '/a/list/0' },
        { op: 'test', path: '/keep', value: true },
      ]),
    ).toEqual({ a: { list: [2, 3] }, keep: true, moved: 1, copied: 1 })
    expect(doc.a.list).toEqual([1, 2]) // the input is not touched
    expect(() => applyJsonPatch(doc, [{ op: 'replace', path: '/missing', value: 1 }])).toThrow()
    expect(applyMergePatch({ a: { b: 1, c: 2 }, d: [1] }, { a: { b: null }, d: [2] })).toEqual({
      a: { c: 2 },
      d: [2],
    })
  })

  it('parses label selectors like the API server', () => {
    const labels = (l: Record<string, string>) => ({ metadata: { labels: l } })
    const match = (selector: string, l: Record<string, string>) =>
      parseLabelSelector(selector)(labels(l))
    expect(match('a=1,b!=2', { a: '1' })).toBe(true)
    expect(match('a==1', { a: '2' })).toBe(false)
    expect(match('a in (1, 2),!c', { a: '2' })).toBe(true)
    expect(match('a notin (1)', {})).toBe(true)
    expect(match('a', {})).toBe(false)
    expect(match('x.io/y-z > 3', { 'x.io/y-z': '4' })).toBe(true)
    expect(match('', { any: 'thing' })).toBe(true)
    expect(() => parseLabelSelector('a=b,')).toThrow()
  })

  it('evaluates printer-column JSONPaths and ages', () => {
    const object = {
      status: {
        conditions: [
          { type: 'Synced', status: 'False' },
          { type: 'Ready', status: 'True' },
        ],
      },
    }
    expect(evaluateJsonPath('.status.conditions[?(@.type=="Ready")].status', object)).toEqual([
      'True',
    ])
    expect(evaluateJsonPath('{.status.conditions[*].type}', object)).toEqual(['Synced', 'Ready'])
    expect(evaluateJsonPath(".status['conditions'][-1].type", object)).toEqual(['Ready'])
    expect(evaluateJsonPath('.status.nope', object)).toEqual([])
    expect(evaluateJsonPath('.status..bad', object)).toEqual([])
    expect(
      [59, 119, 150, 600, 3 * 3600 + 60, 10 * 3600, 3 * 86400 + 3600, 400 * 86400].map(
        humanDuration,
      ),
    ).toEqual(['59s', '119s', '2m30s', '10m', '3h1m', '10h', '3d1h', '400d'])
  })
})
