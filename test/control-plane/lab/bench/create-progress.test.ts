import { describe, expect, it } from 'vitest'
import {
  createProgress,
  type ProgressOptions,
} from '../../../../control-plane/lab/bench/create-progress.ts'

function harness(overrides: Partial<ProgressOptions>) {
  const writes: string[] = []
  let clock = 1_000
  const progress = createProgress({
    workload: 'shared-prefix',
    router: 'kinference',
    rate: 'poisson@2',
    total: 600,
    isTTY: false,
    write: (text) => writes.push(text),
    now: () => clock,
    ...overrides,
  })
  return {
    progress,
    writes,
    advance: (ms: number) => {
      clock += ms
    },
  }
}

describe('createProgress on a terminal', () => {
  it('redraws one bar line in place, at most every 100 ms, and ends it on finish', () => {
    const { progress, writes, advance } = harness({ isTTY: true })
    advance(45_600)
    progress.update(123)
    expect(writes).toEqual([
      '\r\x1b[2Kshared-prefix kinference poisson@2 [####----------------] 123/600 req  45.6 s',
    ])
    advance(50)
    progress.update(124) // too soon: not drawn
    expect(writes).toHaveLength(1)
    advance(50)
    progress.update(300)
    expect(writes[1]).toBe(
      '\r\x1b[2Kshared-prefix kinference poisson@2 [##########----------] 300/600 req  45.7 s',
    )
    advance(1)
    progress.update(600) // completion is always drawn
    expect(writes[2]).toContain('[####################] 600/600 req  45.7 s')
    progress.finish()
    expect(writes.slice(3)).toEqual(['\n'])
    expect(writes.every((text) => !text.slice(0, -1).includes('\n'))).toBe(true)
    progress.finish()
    progress.update(600)
    expect(writes).toHaveLength(4)
  })

  it('draws the final state on finish when the last update was not drawn', () => {
    const { progress, writes } = harness({ isTTY: true, total: 10 })
    progress.update(1)
    progress.update(2)
    progress.finish()
    expect(writes).toEqual([
      '\r\x1b[2Kshared-prefix kinference poisson@2 [##------------------] 1/10 req  0.0 s',
      '\r\x1b[2Kshared-prefix kinference poisson@2 [####----------------] 2/10 req  0.0 s',
      '\n',
    ])
  })
})

describe('createProgress in a log', () => {
  it('writes a plain line each time another 10% is done, and on completion', () => {
    const { progress, writes, advance } = harness({ isTTY: false })
    for (let done = 1; done <= 600; done++) {
      advance(100)
      progress.update(done)
    }
    progress.finish()
    expect(writes).toHaveLength(10)
    expect(writes[0]).toBe('shared-prefix kinference poisson@2: 60/600 req (10%)  6.0 s\n')
    expect(writes[4]).toBe('shared-prefix kinference poisson@2: 300/600 req (50%)  30.0 s\n')
    expect(writes[9]).toBe('shared-prefix kinference poisson@2: 600/600 req (100%)  60.0 s\n')
    expect(writes.join('')).not.toContain('\r')
  })

  it('honours everyPercent, skips steps jumped over, and reports an unfinished run on finish', () => {
    const { progress, writes } = harness({ isTTY: false, total: 8, everyPercent: 25 })
    progress.update(1) // 12%: nothing yet
    progress.update(5) // 62%: one line, not one per step passed
    progress.update(5)
    progress.update(6) // 75%: next step
    progress.update(7) // 87%: same step
    progress.finish() // the final state, not printed yet
    progress.finish()
    expect(writes).toEqual([
      'shared-prefix kinference poisson@2: 5/8 req (62%)  0.0 s\n',
      'shared-prefix kinference poisson@2: 6/8 req (75%)  0.0 s\n',
      'shared-prefix kinference poisson@2: 7/8 req (87%)  0.0 s\n',
    ])
  })

  it('does not repeat the last line on finish', () => {
    const { progress, writes } = harness({ isTTY: false, total: 4 })
    progress.update(4)
    progress.update(4)
    progress.finish()
    expect(writes).toEqual(['shared-prefix kinference poisson@2: 4/4 req (100%)  0.0 s\n'])
  })
})

describe('createProgress options', () => {
  it('refuses bounds that cannot draw, naming the option', () => {
    const cases: [Partial<ProgressOptions>, string][] = [
      [{ everyPercent: 0 }, 'progress: everyPercent must be a number >= 1'],
      [{ minRedrawMs: -1 }, 'progress: minRedrawMs must be a number >= 0'],
      [{ barWidth: 1.5 }, 'progress: barWidth must be a positive integer'],
    ]
    for (const [overrides, message] of cases) {
      expect(() => harness(overrides)).toThrow(
        expect.objectContaining({ code: 'invalid_config', message }),
      )
    }
  })
})
