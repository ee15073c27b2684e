import { readFileSync } from 'node:fs'
import { beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { ServiceLevel } from '../../../shared/crd/service-level.ts'
import {
  drainSeconds,
  judgeObjective,
  ttftObjective,
} from '../../../shared/policy/apply-service-level.ts'
import { evaluatePolicy } from '../../../shared/policy/evaluate-policy.ts'
import { interpretRequest } from '../../../shared/policy/interpret-request.ts'
import type {
  PolicyDecision,
  PolicyInput,
  PolicyRequest,
} from '../../../shared/policy/policy-decision.ts'
import { examplesDir, readYamlFolder } from '../../support/read-yaml-documents.ts'
import { exampleSnapshot, request, statuses } from './example-snapshot.ts'

let snapshot: ConfigSnapshot
beforeAll(async () => {
  snapshot = await exampleSnapshot()
})

const evaluate = (req: PolicyRequest, poolStatus: PolicyInput['poolStatus']) =>
  evaluatePolicy(snapshot, { request: req, poolStatus })
const predicted = (ms: number) => statuses({ 'qwen-27b': { predictedTtftMs: ms } })
const backends = (decision: PolicyDecision) =>
  decision.kind === 'serve' ? decision.attempts.map((a) => a.backend) : decision.kind
const local = 'kinference/qwen-27b-local'
const bedrock = 'kinference/bedrock-claude'

describe('the objective of a request', () => {
  const level = ServiceLevel.parse({ ttftMs: 2000, allowHeader: true, minTtftMs: 250 })

  it("is the rule's, or the header's held between the floor and the rule's", () => {
    expect(ttftObjective(level, undefined)).toEqual({ ttftMs: 2000, from: 'policy' })
    expect(ttftObjective(level, 800)).toEqual({ ttftMs: 800, from: 'header' })
    expect(ttftObjective(level, 50)).toEqual({ ttftMs: 250, from: 'header' })
    expect(ttftObjective(level, 90_000)).toEqual({ ttftMs: 2000, from: 'header' })
  })

  it('ignores the header where the rule does not allow it', () => {
    const closed = ServiceLevel.parse({ ttftMs: 2000 })
    expect(ttftObjective(closed, 800)).toEqual({ ttftMs: 2000, from: 'policy' })
  })

  it('drains in whole seconds, at least one', () => {
    expect(drainSeconds(5300, 2000)).toBe(4)
    expect(drainSeconds(3000, 2000)).toBe(1)
    expect(drainSeconds(2001, 2000)).toBe(1)
  })
})

describe('judging the objectives against a prediction', () => {
  const ttftOnly = ServiceLevel.parse({ ttftMs: 2000 })
  const withTokens = ServiceLevel.parse({ ttftMs: 2000, tpotMs: 150 })

  it('meets a TTFT-only level whatever the predicted time per token', () => {
    expect(judgeObjective(ttftOnly, undefined, { ttftMs: 1900, tpotMs: 900 }).kind).toBe('met')
    expect(judgeObjective(ttftOnly, undefined, { ttftMs: 2100, tpotMs: 10 }).kind).toBe('missed')
  })

  it('misses a level with tpotMs when the predicted time per token is above it', () => {
    const verdict = judgeObjective(withTokens, undefined, { ttftMs: 300, tpotMs: 151 })
    expect(verdict.kind).toBe('missed')
    if (verdict.kind !== 'missed') return
    expect(verdict.shed.message).toMatch(/time-per-output-token objective of 150 ms/)
    expect(verdict.shed.retryAfterSeconds).toBe(1)
    expect(judgeObjective(withTokens, undefined, { ttftMs: 300, tpotMs: 150 }).kind).toBe('met')
  })

  it('judges the TTFT alone where the time per token is unknown, and nothing without a prediction', () => {
    expect(judgeObjective(withTokens, undefined, { ttftMs: 300, tpotMs: null }).kind).toBe('met')
    expect(judgeObjective(withTokens, undefined, null).kind).toBe('unknown')
  })

  it('refuses a time-per-token objective out of range', () => {
    expect(ServiceLevel.safeParse({ ttftMs: 2000, tpotMs: 0 }).success).toBe(false)
    expect(ServiceLevel.safeParse({ ttftMs: 2000, tpotMs: 60_001 }).success).toBe(false)
  })
})

describe('service levels (example service-levels.yaml)', () => {
  const interactive = (more: Partial<PolicyRequest> = {}) =>
    request('stark-industries', 'qwen3.8-27b-fp8', more)

  it('serves locally when the best pod is predicted to meet the objective', () => {
    const decision = evaluate(interactive(), predicted(1500))
    expect(backends(decision)).toEqual([local, bedrock])
    expect(decision.kind === 'serve' && decision.reason).toMatch(
      /serviceLevel: TTFT objective 2000 ms \(policy\) met \(best local predicted 1500 ms\)/,
    )
  })

  it('bursts a request without PII when no pod can meet it', () => {
    const decision = evaluate(interactive(), predicted(2600))
    expect(backends(decision)).toEqual([bedrock, local])
  })

  it('never bursts a request with PII: BurstOrShed sheds it with 429 and the drain', () => {
    for (const more of [{ labels: ['pii:card'] }, { detectorFailed: true }]) {
      const decision = evaluate(interactive(more), predicted(5300))
      expect(decision).toMatchObject({
        kind: 'reject',
        status: 429,
        code: 'slo_unattainable',
        retryAfterSeconds: 4,
        rule: 'interactive-within-2s',
      })
    }
  })

  it('serves a request with PII locally when its objective is met', () => {
    const decision = evaluate(interactive({ labels: ['pii:email'] }), predicted(1900))
    expect(backends(decision)).toEqual([local])
  })

  it("takes the client's header where the rule allows it, within its bounds", () => {
    expect(backends(evaluate(interactive({ sloTtftMs: 800 }), predicted(1000)))).toEqual([
      bedrock,
      local,
    ])
    expect(backends(evaluate(interactive({ sloTtftMs: 1200 }), predicted(1000)))).toEqual([
      local,
      bedrock,
    ])
    // Not looser than the rule's 2 s, whatever the header asks.
    expect(backends(evaluate(interactive({ sloTtftMs: 60_000 }), predicted(2500)))).toEqual([
      bedrock,
      local,
    ])
    // Not tighter than the floor of 250 ms.
    expect(backends(evaluate(interactive({ sloTtftMs: 1 }), predicted(240)))).toEqual([
      local,
      bedrock,
    ])
  })

  it('ignores the header where the rule does not allow it, and sheds batch past 30 s', () => {
    const batch = (more: Partial<PolicyRequest>) => interactive({ labels: ['batch'], ...more })
    expect(backends(evaluate(batch({ sloTtftMs: 100 }), predicted(5000)))).toEqual([local])
    expect(evaluate(batch({ sloTtftMs: 100 }), predicted(31_500))).toMatchObject({
      kind: 'reject',
      status: 429,
      code: 'slo_unattainable',
      retryAfterSeconds: 2,
    })
  })

  it('serves as decided when no prediction is known: an objective never sheds on a guess', () => {
    const decision = evaluate(interactive({ labels: ['pii'] }), statuses())
    expect(backends(decision)).toEqual([local])
  })

  it('asks for the status of a single-backend rule only when its service level acts on a miss', () => {
    const batch = interactive({ labels: ['batch'] })
    expect(interpretRequest(snapshot, batch).pools).toEqual(['kinference/qwen-27b'])
    const serving = exampleSnapshotWith('Serve')
    expect(interpretRequest(serving, batch).pools).toEqual([])
  })
})

it("docs/service-levels.md's example is the rules of the validated example", () => {
  const block = /```yaml\n([\s\S]*?)```/.exec(readFileSync('docs/service-levels.md', 'utf8'))
  const example = readYamlFolder(examplesDir)
    .flatMap(({ documents }) => documents as { metadata: { name: string }; spec: object }[])
    .find((document) => document.metadata.name === 'service-levels')
  if (!block || !example) throw new Error('the docs block or the example is missing')
  expect(parse(block[1] ?? '')).toEqual({ rules: (example.spec as { rules: unknown }).rules })
})

describe('policies that do not shed or burst on a miss decide as before', () => {
  const grid = [undefined, 300, 2500, 40_000]
  const cases = [
    request('globex', 'qwen3.8-27b-fp8'),
    request('initech-health', 'qwen3.8-27b-fp8', { labels: ['pii'] }),
    request('initech-health', 'qwen3.8-27b-fp8'),
    request('acme-support', 'chat', { promptTokens: 300 }),
  ]

  it("a client's header changes nothing where no rule has a service level", () => {
    for (const req of cases)
      for (const ms of grid) {
        const poolStatus = ms === undefined ? statuses() : predicted(ms)
        const without = evaluate(req, poolStatus)
        expect(without.kind).not.toBe('reject')
        expect(evaluate({ ...req, sloTtftMs: 100 }, poolStatus)).toEqual(without)
      }
  })

  it('whenUnattainable Serve keeps the attempts of the same rule without a service level', () => {
    const serving = exampleSnapshotWith('Serve')
    const bare = exampleSnapshotWith(null)
    for (const labels of [[], ['batch'], ['pii']])
      for (const ms of grid) {
        const poolStatus = ms === undefined ? statuses() : predicted(ms)
        const req = request('stark-industries', 'qwen3.8-27b-fp8', { labels, sloTtftMs: 100 })
        const a = evaluatePolicy(serving, { request: req, poolStatus })
        const b = evaluatePolicy(bare, { request: req, poolStatus })
        expect(backends(a)).toEqual(backends(b))
        const reason = (d: PolicyDecision) => (d.kind === 'serve' ? d.reason : d.kind)
        expect(reason(a)).toMatch(/; serviceLevel: /)
        expect(reason(a).replace(/; serviceLevel: [^;]*/, '')).toBe(reason(b))
      }
  })
})

let edited: Map<string, ConfigSnapshot> = new Map()
beforeAll(async () => {
  edited = new Map()
  for (const mode of ['Serve', null] as const) {
    const changed = await exampleSnapshot((documents) => {
      for (const document of documents as { metadata: { name: string }; spec: never }[]) {
        if (document.metadata.name !== 'service-levels') continue
        const rules = (document.spec as { rules: { serviceLevel?: object }[] }).rules
        for (const rule of rules) {
          if (mode === null) delete rule.serviceLevel
          else rule.serviceLevel = { ...rule.serviceLevel, whenUnattainable: mode }
        }
      }
    })
    edited.set(String(mode), changed)
  }
})

function exampleSnapshotWith(mode: 'Serve' | null): ConfigSnapshot {
  const found = edited.get(String(mode))
  if (!found) throw new Error('the edited snapshots are read before their beforeAll ran')
  return found
}
