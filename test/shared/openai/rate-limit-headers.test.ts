import { describe, expect, it } from 'vitest'
import { openAiDuration, rateLimitHeaders } from '../../../shared/openai/rate-limit-headers.ts'

describe('rateLimitHeaders', () => {
  const quotas = { requestsPerMinute: 60, tokensPerMinute: 6_000 }

  it('gives limit, remaining and reset for each limit from the buckets', () => {
    const headers = rateLimitHeaders(
      quotas,
      {
        requests: { level: 30, updatedMs: 1_000 },
        tokens: { level: 5_999.5, updatedMs: 1_000 },
      },
      1_000,
    )
    expect(headers).toEqual({
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '30',
      'x-ratelimit-reset-requests': '30s',
      'x-ratelimit-limit-tokens': '6000',
      'x-ratelimit-remaining-tokens': '5999',
      'x-ratelimit-reset-tokens': '5ms',
    })
  })

  it('refills the buckets to now, and reads a debt as none remaining', () => {
    const headers = rateLimitHeaders(quotas, { tokens: { level: -6_000, updatedMs: 0 } }, 30_000)
    expect(headers['x-ratelimit-remaining-tokens']).toBe('0')
    expect(headers['x-ratelimit-reset-tokens']).toBe('1m30s')
    expect(headers['x-ratelimit-remaining-requests']).toBe('60')
    expect(headers['x-ratelimit-reset-requests']).toBe('0s')
  })

  it('without the state: the limits, and the refused one’s Retry-After', () => {
    expect(rateLimitHeaders(quotas, null, 0, { limit: 'requests', retryAfterSeconds: 2 })).toEqual({
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '2s',
      'x-ratelimit-limit-tokens': '6000',
    })
    expect(rateLimitHeaders({}, null, 0)).toEqual({})
  })
})

describe('openAiDuration', () => {
  it('writes durations as OpenAI does', () => {
    expect([0, 20, 999.2, 1_000, 1_001, 360_000, 3_723_000].map(openAiDuration)).toEqual([
      '0s',
      '20ms',
      '1000ms',
      '1s',
      '2s',
      '6m0s',
      '1h2m3s',
    ])
  })
})
