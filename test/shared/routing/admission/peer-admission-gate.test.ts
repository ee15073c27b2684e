import { describe, expect, it } from 'vitest'
import { peerAdmissionGate } from '../../../../shared/routing/admission/peer-admission-gate.ts'
import { builtinStrategies } from '../../../../shared/routing/strategies/strategy-registry.ts'
import { draw, pod, request, routeOf, scraped } from './admission-fixtures.ts'

/** Each rule apart: llm-d's refuses this pool (mean score 1) but not Dynamo's (nobody busy)... */
const llmdSaturated = routeOf([scraped('a', 5, 0.5), scraped('b', 5, 0.5)])
/** ...and Dynamo's refuses this one (every worker over 10,000 prefill tokens) but not llm-d's. */
const dynamoBusy = routeOf([
  pod('a', { load: { pendingPrefillTokens: 20_000 } }),
  pod('b', { load: { pendingPrefillTokens: 20_000 } }),
])

function refuses(name: string, route: ReturnType<typeof routeOf>) {
  return peerAdmissionGate(name)?.admit(route, request(), 0, draw(0.5)).kind === 'refuse'
}

describe('peerAdmissionGate', () => {
  it('gives llm-d sticky and GIE default llm-d’s saturation gate', () => {
    for (const name of ['llmd-sticky', 'gie-default']) {
      expect(refuses(name, llmdSaturated)).toBe(true)
      expect(refuses(name, dynamoBusy)).toBe(false)
    }
    expect(peerAdmissionGate('llmd-sticky')?.name).toBe('llm-d flow control')
    expect(peerAdmissionGate('gie-default')?.name).toBe('GIE saturation detector')
  })

  it('gives Dynamo its busy threshold', () => {
    expect(refuses('dynamo', dynamoBusy)).toBe(true)
    expect(refuses('dynamo', llmdSaturated)).toBe(false)
    expect(peerAdmissionGate('dynamo')?.name).toBe('Dynamo busy threshold')
  })

  it('gives every other registered strategy, and an unknown name, no gate', () => {
    const gated = new Set(['llmd-sticky', 'gie-default', 'dynamo'])
    const names = builtinStrategies.map((strategy) => strategy.name)
    expect(names.filter((name) => gated.has(name))).toHaveLength(3)
    for (const name of names.filter((name) => !gated.has(name)))
      expect(peerAdmissionGate(name)).toBeNull()
    expect(peerAdmissionGate('no-such-strategy')).toBeNull()
  })
})
