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
  it('integrates the tokens in flight over time, each change from when it happened', () => {
    const pod = new RoutedPod('a', 100, settings, () => settings.stepCost)
    const first = requestOf(1_000, 0)
    pod.started(first)
    pod.started(requestOf(3_000, 100))
    pod.firstToken(first, 200)
    first.generated = 50
    pod.progressed(50, 300)
    // 1000 tokens for 100 ms, 4000 for 200 ms, then 4050 for 100 ms.
    expect(pod.contextIntegral(400)).toBe(100_000 + 800_000 + 405_000)
    // A time before the last reading (clocks a network delay apart) adds nothing.
    expect(pod.contextIntegral(350)).toBe(1_305_000)
    // Its decode: 49 steps in 200 ms beside a mean of (4000·100 + 4050·100) / 200 tokens.
    expect(pod.finished(first, 400, null)).toEqual({ meanContextTokens: 4_025, tpotMs: 200 / 49 })
    pod.ended(first, 400)
    expect(pod.contextIntegral(500)).toBe(1_305_000 + 300_000)
  })

  it('observes no decode of a request that shared the pod with another replica’s', () => {
    const pod = new RoutedPod('a', 100, settings, () => settings.stepCost)
    const request = { ...requestOf(1_000, 0), sawWholeQueue: false }
    pod.started(request)
    pod.firstToken(request, 100)
    request.generated = 10
    pod.progressed(10, 200)
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
    pod.started(requestOf(10_000, 0))
    expect(pod.candidate(0, 0, settings.prior).memory?.stepMs).toBe(40 + 1)
    stepCost = { decodeStepMs: 80, msPerContextToken: 3e-4 }
    const memory = pod.candidate(0, 0, settings.prior).memory
    expect(memory?.stepMs).toBe(80 + 3)
    expect(memory?.msPerContextToken).toBe(3e-4)
  })
})
