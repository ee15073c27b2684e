import { describe, expect, it } from 'vitest'
import { parseDesTimingOptions } from '../../../../../control-plane/lab/bench/des/des-timing-options.ts'

describe('the DES timing options', () => {
  it('default to 5 ms events, metrics every 50 ms (GIE’s refresh interval) read 20 ms late, 0.5 ms network', () => {
    expect(parseDesTimingOptions({})).toEqual({
      eventDelayMs: 5,
      metricsIntervalMs: 50,
      metricsDelayMs: 20,
      eventLossRate: 0,
      networkDelayMs: 0.5,
    })
    expect(parseDesTimingOptions({ eventDelayMs: 0, networkDelayMs: 2 })).toMatchObject({
      eventDelayMs: 0,
      networkDelayMs: 2,
    })
  })

  it('refuse negative delays and a zero scrape interval, naming the option', () => {
    expect(() => parseDesTimingOptions({ networkDelayMs: -1 })).toThrow(
      expect.objectContaining({
        code: 'invalid_config',
        message: 'des benchmark: networkDelayMs must be a number of ms >= 0',
      }),
    )
    expect(() => parseDesTimingOptions({ metricsIntervalMs: 0 })).toThrow(
      expect.objectContaining({
        code: 'invalid_config',
        message: 'des benchmark: metricsIntervalMs must be a number of ms > 0',
      }),
    )
    expect(() => parseDesTimingOptions({ eventLossRate: 1.5 })).toThrow(
      expect.objectContaining({
        message: 'des benchmark: eventLossRate must be a fraction from 0 to 1',
      }),
    )
  })
})
