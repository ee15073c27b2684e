import { describe, expect, it } from 'vitest'
import { afterFailure } from '../../../../control-plane/scorer/serving/serve-on-pool.ts'

// What a failed attempt does to the pod and the request. Only a pod that cannot be reached,
// or says it cannot serve, leaves routing for the cool-down; one request's failure (its
// answer too slow to come, an error of its own) leaves the pod as it was.

describe('after a failed attempt', () => {
  it.each([
    ['a pod down (refused, reset, cut before any byte)', 'pod-down', true, true],
    ['a pod that says it cannot serve (502–504)', 'pod-unavailable', true, true],
    ['a 5xx of this request on a pod that answers', 'pod-error', false, true],
    ['no answer within the response timeout', 'timeout', false, false],
  ] as const)('%s: pod at fault %s, retried %s', (_, cause, podAtFault, retry) => {
    expect(afterFailure({ kind: 'failed-before-bytes', reason: 'r', cause })).toEqual({
      podAtFault,
      retry,
    })
  })

  it('leaves the pod routable when the client left, and out when a stream broke off', () => {
    expect(afterFailure({ kind: 'client-gone' })).toEqual({ podAtFault: false, retry: false })
    expect(afterFailure({ kind: 'failed-after-bytes', reason: 'r', generatedTokens: 3 })).toEqual({
      podAtFault: true,
      retry: false,
    })
  })
})
