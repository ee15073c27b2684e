import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { lintChart, templateChart } from '../../support/helm-chart.ts'

/**
 * Bad values files: each must stop both `helm lint --strict` and `helm template` with the
 * message its first line names (`# expect: ...`), from values.schema.json or, for what a
 * schema cannot say (one value against another), from the templates' own checks.
 */
const fixtures = 'test/fixtures/helm/bad-values'
const cases = readdirSync(fixtures)
  .filter((name) => name.endsWith('.yaml'))
  .sort()
  .map((name) => {
    const file = join(fixtures, name)
    const expected = /^# expect: (.+)$/m.exec(readFileSync(file, 'utf8'))?.[1]
    if (expected === undefined) throw new Error(`${file} has no "# expect:" line`)
    return { name, file, expected }
  })

describe('values the chart refuses', () => {
  it('has several bad values files to check', () => {
    expect(cases.length).toBeGreaterThanOrEqual(8)
  })

  it.each(cases)('$name: helm template fails with "$expected"', async ({ file, expected }) => {
    const result = await templateChart({ valuesFile: file })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain(expected)
    expect(result.stdout).toBe('')
  })

  it.each(cases)('$name: helm lint --strict fails with it too', async ({ file, expected }) => {
    const result = await lintChart({ valuesFile: file })
    expect(result.code).not.toBe(0)
    expect(result.stdout + result.stderr).toContain(expected)
  })
})
