import type {
  PolicyDecision,
  PolicyRequest,
  PoolStatus,
} from '../../shared/policy/policy-decision.ts'

/** What kinfctl explain reports: the request as evaluated, what the edge would ask, the decision. */
export interface Explanation {
  snapshot: string
  request: PolicyRequest
  detectedLabels: string[]
  clientLabels: string[]
  detector: string
  poolsToAsk: string[]
  poolStatus: Record<string, PoolStatus>
  decision: PolicyDecision
}

/** The explanation for a person: the decision first, then its inputs, attempts and trace. */
export function formatExplanation(e: Explanation): string {
  const { decision, request } = e
  const lines: string[] = []
  const where = `policy ${decision.policy ?? '(none)'}, rule ${decision.rule ?? '(none)'}`
  if (decision.kind === 'serve') {
    lines.push(`decision: serve model ${decision.model} (${where})`)
  } else if (decision.kind === 'reject') {
    lines.push(`decision: reject ${decision.status} ${decision.code} (${where})`)
    lines.push(`message:  ${decision.message}`)
  } else {
    lines.push(`decision: defer (${where})`)
    lines.push(
      `          until ${decision.pools.join(', ') || 'its pools'} at saturation <= ${decision.maxSaturation}; wait up to ${decision.maxWaitMs} ms, then 429 with Retry-After: ${decision.retryAfterSeconds}`,
    )
  }
  lines.push(
    '',
    `request:  tenant ${request.tenant}, model ${request.model}, ${request.promptTokens} prompt tokens`,
    `labels:   ${list(request.labels)} (detected ${list(e.detectedLabels)}, given ${list(e.clientLabels)}; detectors ${e.detector})`,
    `pools:    ${
      Object.entries(e.poolStatus)
        .map(
          ([id, s]) =>
            `${id} saturation ${s.saturation}${s.saturated ? ' (saturated)' : ''}${s.predictedTtftMs === null ? '' : `, TTFT ${s.predictedTtftMs} ms`}`,
        )
        .join('; ') || 'no status given (unknown)'
    }`,
    `scorer:   ${e.poolsToAsk.length > 0 ? `the edge would ask about ${e.poolsToAsk.join(', ')}` : 'the edge would not ask'}`,
  )
  if (decision.kind === 'serve') {
    lines.push('', 'attempts:')
    decision.attempts.forEach((a, i) => {
      const on = a.pool === undefined ? `provider ${a.provider}` : `pool ${a.pool}`
      lines.push(`  ${i + 1}. ${a.backend}  ${a.locality}  ${on}  model ${a.model}`)
    })
    lines.push('', `reason:   ${decision.reason}`)
  }
  lines.push('', 'trace:')
  if (decision.trace.length === 0) lines.push('  (no rule considered)')
  for (const step of decision.trace) {
    lines.push(`  ${step.outcome.padEnd(10)} ${step.rule}: ${step.why}`)
  }
  return `${lines.join('\n')}\n`
}

const list = (items: readonly string[]) => (items.length > 0 ? `[${items.join(', ')}]` : '[]')
