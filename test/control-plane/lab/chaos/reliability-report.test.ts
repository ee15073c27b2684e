import { describe, expect, it } from 'vitest'
import {
  renderReliabilityTable,
  replaceReliabilityTable,
  reportBegin,
  reportEnd,
} from '../../../../control-plane/lab/chaos/reliability-report.ts'
import {
  percentile,
  type ScenarioResult,
  scenarioPassed,
  tallyOutcomes,
} from '../../../../control-plane/lab/chaos/scenario-result.ts'

const result = (over: Partial<ScenarioResult> = {}): ScenarioResult => ({
  id: 'x',
  title: '1. x',
  requests: 3,
  completed: 2,
  cleanErrors: 1,
  lost: 0,
  lostWhy: [],
  errorKinds: ['503 saturated ×1'],
  convergence: { what: 'pod out', ms: 800, targetMs: 2_000 },
  checks: [{ name: 'c', ok: true, detail: 'd' }],
  notes: [],
  durationMs: 1_000,
  ...over,
})
const header = { size: 'short', seed: 1, date: '2026-12-01', machine: '2 cores' }

describe('tallyOutcomes', () => {
  it('counts each kind and keeps why requests were lost', () => {
    const tally = tallyOutcomes([
      {
        kind: 'completed',
        status: 200,
        pod: 'a',
        cachedTokens: 0,
        ttftMs: 1,
        latencyMs: 2,
        startedMs: 0,
      },
      {
        kind: 'clean-error',
        status: 503,
        code: 'saturated',
        retryAfter: '1',
        latencyMs: 1,
        startedMs: 0,
      },
      { kind: 'lost', why: 'a hang', latencyMs: 1, startedMs: 0 },
    ])
    expect(tally).toMatchObject({ requests: 3, completed: 1, cleanErrors: 1, lost: 1 })
    expect(tally.lostWhy).toEqual(['a hang'])
    expect(tally.errorKinds).toEqual(['503 saturated ×1'])
  })
})

describe('scenarioPassed', () => {
  it('needs nothing lost, every check, and convergence within its target', () => {
    expect(scenarioPassed(result())).toBe(true)
    expect(scenarioPassed(result({ lost: 1 }))).toBe(false)
    expect(scenarioPassed(result({ checks: [{ name: 'c', ok: false, detail: '' }] }))).toBe(false)
    expect(scenarioPassed(result({ convergence: { what: 'w', ms: 2_500, targetMs: 2_000 } }))).toBe(
      false,
    )
    expect(scenarioPassed(result({ convergence: { what: 'w', ms: null, targetMs: null } }))).toBe(
      false,
    )
  })
})

describe('the reliability table', () => {
  it('has a row per scenario and marks a failed one', () => {
    const table = renderReliabilityTable(
      [result(), result({ id: 'y', title: '2. y', lost: 2 })],
      header,
    )
    const rows = table.split('\n').filter((line) => line.startsWith('| '))
    const cells = rows.map((line) => line.split('|').map((cell) => cell.trim()))
    expect(cells[2]).toEqual([
      '',
      '1. x',
      '3',
      '2',
      '1',
      '0',
      'pod out: 800 ms (target ≤ 2000 ms)',
      '1/1',
      '',
    ])
    expect(cells[3]?.slice(1, 6)).toEqual(['2. y', '3', '2', '1', '2'])
    expect(cells[3]?.[7]).toBe('1/1 **FAILED**')
    // Padded as the formatter lays a table out, so npm run lint passes on what it writes.
    expect(new Set(rows.map((line) => [...line].length)).size).toBe(1)
    expect(rows[1]).toMatch(/^\| -+ \| -+: \|/)
  })

  it('replaces only what is between its markers', () => {
    const document = `# Reliability\n\nprose\n\n${reportBegin}\nold\n${reportEnd}\n\nmore prose\n`
    const table = renderReliabilityTable([result()], header)
    const replaced = replaceReliabilityTable(document, table)
    expect(replaced).toContain('prose\n\n')
    expect(replaced).toContain('more prose')
    expect(replaced).not.toContain('old')
    expect(replaceReliabilityTable(replaced, table)).toBe(replaced)
  })
})

describe('percentile', () => {
  it('is the nearest rank', () => {
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3)
    expect(percentile([5, 1, 4, 2, 3], 99)).toBe(5)
    expect(percentile([], 99)).toBeNull()
  })
})
