import { describe, expect, it } from 'vitest'
import type { PodCandidate, RoutingRequest } from '../../../../shared/routing/routing-strategy.ts'
import {
  createDynamoStrategy,
  DynamoParameters,
  dynamoCost,
} from '../../../../shared/routing/strategies/create-dynamo-strategy.ts'
import { createKinferenceStrategy } from '../../../../shared/routing/strategies/create-kinference-strategy.ts'
import {
  createLlmdStickyStrategy,
  LlmdStickyParameters,
} from '../../../../shared/routing/strategies/create-llmd-sticky-strategy.ts'
import { context, pod, request } from './routing-fixtures.ts'

// How each strategy weighs blocks a pod holds in its CPU tier (vLLM's OffloadingConnector)
// past its GPU hit: kinference by the load's time against recomputing, llm-d's precise
// scorer at 0.8 a block, Dynamo's overlap credit at 0.75 a host block.

const prompt: RoutingRequest = request({ promptTokens: 3_200, maxTokens: 64 })
/** L40S 27B: 2 × 64 layers × 8 KV heads × 128 × 1 byte. */
const kvBytesPerToken = 131_072
const fastLink = { kvBytesPerToken, bytesPerSecond: 25e9 }
const slowLink = { kvBytesPerToken, bytesPerSecond: 0.5e9 }
const kinference = (hostLink: typeof fastLink | null) =>
  createKinferenceStrategy({ stepBudget: 8_192, copyHeadroom: 0.85, decodeWeight: 0, hostLink })

/** Holds the first 8 blocks in its GPU and the next 180 in its CPU tier, a little busy. */
const tiered = (): PodCandidate =>
  pod('tiered', {
    cachedBlocks: 8,
    tierBlocks: { CPU: 180 },
    load: { inFlight: 1, pendingRequests: 1, pendingPrefillTokens: 600 },
  })
const cold = () => pod('cold')

describe('kinference values a CPU-tier hit by its load time against recomputing', () => {
  it('picks the pod holding the prefix in its CPU tier when loading beats recomputing', () => {
    const decision = kinference(fastLink).choose(prompt, [cold(), tiered()], context())
    expect(decision.pod).toBe('tiered')
    const score = decision.scores.find((s) => s.pod === 'tiered')
    expect(score?.cachedTokens).toBe(188 * 16)
  })

  it('does not when the host link is slow: loading 2,880 tokens then costs more', () => {
    expect(kinference(slowLink).choose(prompt, [cold(), tiered()], context()).pod).toBe('cold')
    // Nor without a host link (the KV size unknown): the CPU tier counts for nothing.
    expect(kinference(null).choose(prompt, [cold(), tiered()], context()).pod).toBe('cold')
  })
})

describe('llm-d precise weighs CPU blocks 0.8 in its prefix score', () => {
  // 100 blocks: 70 in the GPU and 15 in the CPU tier make a hit of 70% + 0.8 × 15% = 82%,
  // sticky at the filter's 80% threshold; at weight 0 the hit is 70%, and the least
  // loaded pod wins.
  const hundred = request({ promptTokens: 1_600 })
  const warm = () =>
    pod('warm', {
      cachedBlocks: 70,
      tierBlocks: { CPU: 15 },
      load: { pendingRequests: 1, inFlight: 1, pendingPrefillTokens: 4_000 },
    })
  const llmd = (cpuTierWeight?: number) =>
    createLlmdStickyStrategy(
      LlmdStickyParameters.parse({
        prefixProducer: 'precise',
        ...(cpuTierWeight !== undefined && { cpuTierWeight }),
      }),
    )
  it('keeps the pod sticky at the default 0.8, not at 0', () => {
    const decision = llmd().choose(hundred, [pod('idle'), warm()], context())
    expect(decision.pod).toBe('warm')
    expect(decision.reason).toContain('hit 82%')
    expect(llmd(0).choose(hundred, [pod('idle'), warm()], context()).pod).toBe('idle')
  })
})

describe('Dynamo credits host blocks 0.75 in its overlap', () => {
  const parameters = DynamoParameters.parse({})
  const load = { activePrefillTokens: 0, activeBlocks: 0, newBlocks: 100 }
  const hundred = request({ promptTokens: 1_600 })
  it('takes 0.75 of a prefill block off per host block', () => {
    const device = dynamoCost(hundred, 20, load, parameters)
    const host = dynamoCost(hundred, 20, load, parameters, 40)
    expect(device.prefillBlocks).toBe(80)
    expect(host.prefillBlocks).toBe(80 - 0.75 * 40)
    expect(dynamoCost(hundred, 20, load, { ...parameters, hostCacheHitWeight: 0.25 }, 40)).toEqual({
      ...host,
      prefillBlocks: 70,
      cost: 170,
    })
  })
  it('sends a request to the worker holding it on the host over one holding less on the device', () => {
    const strategy = createDynamoStrategy(parameters)
    const devicePod = pod('device', { cachedBlocks: 20 })
    const hostPod = pod('host', { cachedBlocks: 10, tierBlocks: { CPU: 40 } })
    expect(strategy.choose(hundred, [devicePod, hostPod], context()).pod).toBe('host')
    const deviceOnly = createDynamoStrategy({ ...parameters, hostCacheHitWeight: 0 })
    expect(deviceOnly.choose(hundred, [devicePod, hostPod], context()).pod).toBe('device')
  })
})
