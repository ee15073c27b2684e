import { describe, expect, it } from 'vitest'
import { decisionViewOf } from '../../../../control-plane/status-page/state-status-source.ts'
import { type Decision, joinDecisions } from '../../../../shared/state/decision-entry.ts'
import { model, send } from '../../../support/scorer-stack.ts'
import { useSharedStack } from '../../../support/use-scorer-stacks.ts'

const path = '/v1/chat/completions'
const chat = (content: string) =>
  JSON.stringify({ model, max_tokens: 2, messages: [{ role: 'user', content }] })

const stack = useSharedStack({ pods: 1 })

/** The decision log so far, joined with the ends, and its entries as stored. */
async function logged(): Promise<{ decisions: Decision[]; raw: string }> {
  await stack.scorer.flushState()
  const entries = await stack.scorer.state.readDecisions({})
  return { decisions: joinDecisions(entries), raw: JSON.stringify(entries) }
}

describe('the decision log is keyed by the id the edge (or the scorer) made', () => {
  it('two tenants sending the same x-request-id get two rows, each with its own end', async () => {
    const headers = { 'x-request-id': 'same-id-for-both' }
    const acme = await send(stack, path, chat('from acme'), { tenant: 'acme' }, { headers })
    const umbrella = await send(
      stack,
      path,
      chat('from umbrella'),
      { tenant: 'umbrella' },
      {
        headers,
      },
    )
    expect([acme.status, umbrella.status]).toEqual([200, 200])
    const rows = (await logged()).decisions.filter((d) => d.clientRequestId === 'same-id-for-both')
    expect(rows.map((d) => d.tenant)).toEqual(['acme', 'umbrella'])
    expect(new Set(rows.map((d) => d.requestId)).size).toBe(2)
    for (const row of rows) expect(row.end).toMatchObject({ outcome: 'completed', status: 200 })
    // The status page's rows are keyed the same way: neither overwrites the other.
    expect(new Set(rows.map((d) => decisionViewOf(d).id)).size).toBe(2)
  })

  it('uses the request id the edge signed, the client’s beside it', async () => {
    const edgeId = `edge-${crypto.randomUUID()}`
    await send(
      stack,
      path,
      chat('signed id'),
      { tenant: 'acme', requestId: edgeId },
      {
        headers: { 'x-request-id': 'client-chosen' },
      },
    )
    const [row] = (await logged()).decisions.filter((d) => d.requestId === edgeId)
    expect(row).toMatchObject({ tenant: 'acme', clientRequestId: 'client-chosen' })
    expect(row?.end?.outcome).toBe('completed')
  })

  it('stores no x-request-id of 32 KiB or with C1 control characters, raw or at all', async () => {
    const long = 'L'.repeat(32 * 1024)
    const c1 = 'c1\u009b2J\u0085id'
    for (const id of [long, c1]) {
      const answer = await send(
        stack,
        path,
        chat('odd id'),
        { tenant: 'odd' },
        {
          headers: { 'x-request-id': id },
        },
      )
      expect(answer.status).toBe(200)
    }
    const { decisions, raw } = await logged()
    const odd = decisions.filter((d) => d.tenant === 'odd')
    expect(odd).toHaveLength(2)
    for (const row of odd) expect(row.clientRequestId).toBeUndefined()
    expect(raw).not.toContain('L'.repeat(129))
    expect(raw).not.toMatch(/[\u007f-\u009f]/)
  })
})
