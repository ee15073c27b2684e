import { describe, expect, it } from 'vitest'
import {
  createDynamoBusyGate,
  DynamoBusyOptions,
} from '../../../../shared/routing/admission/dynamo-busy-gate.ts'
import type { PodCandidate, PodMemory } from '../../../../shared/routing/routing-strategy.ts'
import { draw, pod, request, routeOf, scraped } from './admission-fixtures.ts'

const gate = createDynamoBusyGate()
const verdict = (candidates: PodCandidate[], busyGate = gate) =>
  busyGate.admit(routeOf(candidates), request(), 0, draw(0.5))

/** A worker the router has sent `pendingPrefillTokens` of prompt still to prefill. */
const prefilling = (name: string, pendingPrefillTokens: number) =>
  pod(name, { load: { pendingPrefillTokens } })

function memory(capacityTokens: number): PodMemory {
  return {
    capacityTokens,
    usedTokens: 0,
    pendingTokens: 0,
    stepMs: 30,
    msPerContextToken: 2e-4,
    releases: () => [],
  }
}

describe('Dynamo busy threshold', () => {
  it('defaults to the request-rejection docs’ thresholds and the frontend’s 529', () => {
    expect(DynamoBusyOptions.parse({})).toEqual({
      activeDecodeBlocksThreshold: 0.85,
      activePrefillTokensThreshold: 10_000,
      decodeBlocksSource: 'engine',
      overloadStatus: 529,
    })
    expect(gate.name).toBe('Dynamo busy threshold')
  })

  it('admits while one worker is not busy, however busy the others', () => {
    expect(
      verdict([scraped('a', 0, 0.99), prefilling('b', 50_000), scraped('c', 30, 0.5)]),
    ).toEqual({ kind: 'admit' })
  })

  it('refuses with 529, all workers busy, when every worker is over a threshold', () => {
    expect(verdict([scraped('a', 0, 0.9), prefilling('b', 12_000)])).toEqual({
      kind: 'refuse',
      status: 529,
      code: 'all_workers_busy',
      message: 'All workers are busy, please retry later (Dynamo busy threshold).',
      retryAfterSeconds: null,
    })
    const docs = createDynamoBusyGate({ overloadStatus: 503 })
    expect(verdict([scraped('a', 0, 0.9)], docs)).toMatchObject({ kind: 'refuse', status: 503 })
  })

  it('makes a worker busy on prefill tokens alone, strictly above 10,000', () => {
    expect(verdict([prefilling('a', 10_001), prefilling('b', 10_001)])).toMatchObject({
      kind: 'refuse',
    })
    expect(verdict([prefilling('a', 10_001), prefilling('b', 10_000)])).toEqual({ kind: 'admit' })
  })

  it('makes a worker busy on KV blocks alone, strictly above 0.85, whatever its queue', () => {
    expect(verdict([scraped('a', 0, 0.86), scraped('b', 0, 0.9)])).toMatchObject({
      kind: 'refuse',
    })
    expect(verdict([scraped('a', 40, 0.85), scraped('b', 0, 0.9)])).toEqual({ kind: 'admit' })
  })

  it('lets a criterion without data make nobody busy: no metrics is not busy on KV', () => {
    expect(verdict([pod('a', { metrics: null }), scraped('b', 0, 0.95)])).toEqual({
      kind: 'admit',
    })
    expect(
      verdict([pod('a', { metrics: null, load: { pendingPrefillTokens: 20_000 } })]),
    ).toMatchObject({ kind: 'refuse' })
  })

  it('reads decode blocks from the router’s in-flight tokens over KV capacity when told', () => {
    const router = createDynamoBusyGate({ decodeBlocksSource: 'router' })
    const full = pod('a', { memory: memory(100_000), load: { activeTokens: 90_000 } })
    const roomy = pod('b', { memory: memory(100_000), load: { activeTokens: 80_000 } })
    // The engine's view (fresh, idle metrics) is ignored under this source, and vice versa.
    expect(verdict([full, full], router)).toMatchObject({ kind: 'refuse' })
    expect(verdict([full, roomy], router)).toEqual({ kind: 'admit' })
    expect(verdict([full, full])).toEqual({ kind: 'admit' })
    const unknownCapacity = pod('c', { load: { activeTokens: 10_000_000 } })
    expect(verdict([unknownCapacity], router)).toEqual({ kind: 'admit' })
  })

  it('turns a criterion off with null, and admits an empty pool (no endpoint is not overload)', () => {
    const prefillOnly = createDynamoBusyGate({ activeDecodeBlocksThreshold: null })
    expect(verdict([scraped('a', 0, 1)], prefillOnly)).toEqual({ kind: 'admit' })
    const off = createDynamoBusyGate({
      activeDecodeBlocksThreshold: null,
      activePrefillTokensThreshold: null,
    })
    expect(verdict([prefilling('a', 1e9)], off)).toEqual({ kind: 'admit' })
    expect(verdict([])).toEqual({ kind: 'admit' })
  })
})
