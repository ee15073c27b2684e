import { describe, expect, it } from 'vitest'
import { routerSettings } from '../../../shared/routing/pool-options.ts'
import { RoutedPod } from '../../../shared/routing/routed-pod.ts'
import type { RoutedRequest } from '../../../shared/routing/routed-request.ts'
import type { StepCost } from '../../../shared/routing/routing-strategy.ts'
import { poolSpec } from '../../support/recording-pool-router.ts'

const settings = routerSettings(poolSpec({ strategy: 'kinference' }))

const requestOf = (promptTokens: number, dispatchedAtMs: number): RoutedRequest => ({
  pod: 'a',
  promptTokens,
  uncachedTokens: promptTokens,
  loadedTokens: 0,
  tierLoadMs: 0,
  maxTokens: 100,
  admissionWaitMs: 0,
  indexedCachedTokens: 0,
  work: promptTokens,
  sawWholeQueue: true,
  dispatchedAtMs,
  firstTokenAtMs: null,
  contextIntegralAtFirstToken: 0,
  generated: 0,
})

describe('RoutedPod: the context its requests decode beside', () => {
  it('integrates the decoding batch’s context over time, each change from when it happened', () => {
    const pod = new RoutedPod('a', 100, settings, () => settings.stepCost)
    const first = requestOf(1_000, 0)
    const second = requestOf(3_000, 100)
    pod.started(first)
    pod.started(second)
    // Waiting for their prefill, neither is in the batch a decode step reads.
    expect(pod.contextIntegral(200)).toBe(0)
    pod.firstToken(first, 200)
    first.generated = 50
    pod.progressed(50, 300, true)
    pod.firstToken(second, 400)
    // 1000 tokens for 100 ms, then 1050 for 100 ms.
    expect(pod.contextIntegral(400)).toBe(100_000 + 105_000)
    // A time before the last reading (clocks a network delay apart) adds nothing.
    expect(pod.contextIntegral(350)).toBe(205_000)
    // 4050 tokens for 100 ms. Its decode: 49 steps in 300 ms beside 610,000 token·ms / 300 ms.
    expect(pod.finished(first, 500, null)).toEqual({
      meanContextTokens: (205_000 + 405_000) / 300,
      tpotMs: 300 / 49,
    })
    pod.ended(first, 500)
    expect(pod.contextIntegral(600)).toBe(610_000 + 300_000)
  })

  it('observes no decode of a request that shared the pod with another replica’s', () => {
    const pod = new RoutedPod('a', 100, settings, () => settings.stepCost)
    const request = { ...requestOf(1_000, 0), sawWholeQueue: false }
    pod.started(request)
    pod.firstToken(request, 100)
    request.generated = 10
    pod.progressed(10, 200, true)
    expect(pod.finished(request, 200, null)).toBeNull()
    expect(pod.finished({ ...request, sawWholeQueue: true }, 200, null)).not.toBeNull()
  })

  it('observes no decode of fewer than two tokens, nor one that took no time', () => {
    const pod = new RoutedPod('a', 100, settings, () => settings.stepCost)
    const request = requestOf(1_000, 0)
    pod.started(request)
    pod.firstToken(request, 100)
    request.generated = 1
    expect(pod.finished(request, 300, null)).toBeNull()
    request.generated = 5
    expect(pod.finished(request, 100, null)).toBeNull()
  })

  it('plans its memory with the step cost its router gives it, read when asked', () => {
    let stepCost: StepCost = { decodeStepMs: 40, msPerContextToken: 1e-4 }
    const pod = new RoutedPod('a', 100, settings, () => stepCost)
    const request = requestOf(10_000, 0)
    pod.started(request)
    // Queued for its prefill it is not in the decoding batch; past its first token it is.
    expect(pod.candidate(0, 0, settings.prior).memory?.stepMs).toBe(40)
    pod.firstToken(request, 10)
    expect(pod.candidate(0, 0, settings.prior).memory?.stepMs).toBe(40 + 1)
    stepCost = { decodeStepMs: 80, msPerContextToken: 3e-4 }
    const memory = pod.candidate(0, 0, settings.prior).memory
    expect(memory?.stepMs).toBe(80 + 3)
    expect(memory?.msPerContextToken).toBe(3e-4)
  })
})
