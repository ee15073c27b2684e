import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import {
  chartValues,
  renderChartReadme,
} from '../../../../control-plane/lab/chart-readme/render-chart-readme.ts'

const valuesText = readFileSync('infra/helm/kinference/values.yaml', 'utf8')

/** Every leaf of the values as a dotted key: what a user can set. */
function leaves(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [prefix]
  const entries = Object.entries(value as Record<string, unknown>)
  if (entries.length === 0) return [prefix]
  return entries.flatMap(([key, child]) => leaves(child, prefix === '' ? key : `${prefix}.${key}`))
}

describe('the chart README, generated from values.yaml', () => {
  it('lists every value of values.yaml with its default, each described', () => {
    const values = chartValues(valuesText)
    expect(values.map((v) => v.key)).toEqual(leaves(parse(valuesText)))
    const undescribed = values.filter((v) => v.description === '').map((v) => v.key)
    expect(undescribed).toEqual([])
    const tag = values.find((v) => v.key === 'image.tag')
    expect(tag).toMatchObject({ type: 'string', defaultValue: '"0.1.0"' })
    expect(tag?.description).toMatch(/latest/)
  })

  it('takes a comment to the key below it, a section’s to its keys without one', () => {
    const values = chartValues(
      [
        '# Ignored: the file header.',
        '',
        'a:',
        '  # About a.',
        '  b:',
        '    c: 1',
        '    # About d.',
        '    d: [x]',
        '  # About e.',
        '  e: true',
      ].join('\n'),
    )
    expect(values).toEqual([
      { key: 'a.b.c', type: 'int', defaultValue: '1', description: 'About a.' },
      { key: 'a.b.d', type: 'list', defaultValue: '["x"]', description: 'About d.' },
      { key: 'a.e', type: 'bool', defaultValue: 'true', description: 'About e.' },
    ])
  })

  it('is up to date in the chart (npm run chart-readme --check)', async () => {
    const { stderr } = await promisify(execFile)(
      process.execPath,
      ['control-plane/lab/chart-readme/main.ts', '--check'],
      { encoding: 'utf8' },
    ).catch((error: { stderr: string; code: number }) => {
      throw new Error(`out of date: ${error.stderr}`)
    })
    expect(stderr).toBe('')
    const readme = readFileSync('infra/helm/kinference/README.md', 'utf8')
    expect(readme).toContain('| `scorer.serviceAccount.annotations` | map | `{}` |')
    expect(
      renderChartReadme({ name: 'x', version: '1', appVersion: '1', description: 'd' }, 'k: 1'),
    ).toContain('| `k` | int | `1` |')
  })
})
