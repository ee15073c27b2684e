import { describe, expect, it } from 'vitest'
import { parseDuration } from '../../../shared/config/parse-duration.ts'

describe('parseDuration', () => {
  it('reads durations as Kubernetes tools write them', () => {
    expect(parseDuration('500ms')).toBe(500)
    expect(parseDuration('15s')).toBe(15_000)
    expect(parseDuration('2m')).toBe(120_000)
    expect(parseDuration('1.5h')).toBe(5_400_000)
    expect(parseDuration('250')).toBe(250)
  })

  it('refuses what is not one', () => {
    for (const text of ['', 's', '-1s', '10 minutes', '1d', '1e3s'])
      expect(parseDuration(text)).toBe(null)
  })
})
