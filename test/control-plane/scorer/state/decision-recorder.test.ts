import { describe, expect, it } from 'vitest'
import { createDecisionRecorder } from '../../../../control-plane/scorer/state/decision-recorder.ts'
import type { DecisionEntry } from '../../../../shared/state/decision-entry.ts'
import { decided, ended } from '../../../support/state-store-conformance.ts'

describe('createDecisionRecorder', () => {
  it('queues entries and writes them in one batch after flushMs', async () => {
    const batches: DecisionEntry[][] = []
    const recorder = createDecisionRecorder({
      store: { appendDecisions: async (entries) => void batches.push([...entries]) },
      flushMs: 20,
      maxBuffered: 100,
      log: () => {},
    })
    for (let i = 0; i < 5; i++) recorder.record(decided(`r${i}`, i))
    expect(batches).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(batches.map((b) => b.length)).toEqual([5])
    await recorder.close()
  })

  it('drops what it cannot write or hold, says so once, and recovers', async () => {
    let failing = true
    let counted = 0
    const written: DecisionEntry[] = []
    const logs: string[] = []
    const recorder = createDecisionRecorder({
      store: {
        appendDecisions: async (entries) => {
          if (failing) throw new Error('redis down')
          written.push(...entries)
        },
      },
      flushMs: 1_000,
      maxBuffered: 3,
      log: (line) => logs.push(line),
      onDropped: (count) => {
        counted += count
      },
    })
    for (let i = 0; i < 5; i++) recorder.record(decided(`r${i}`, i))
    await recorder.flush()
    recorder.record(decided('again', 9))
    await recorder.flush()
    // Two over the buffer, then three and one lost to the failing writes.
    expect(recorder.dropped).toBe(6)
    expect(counted).toBe(6)
    expect(logs).toEqual(['decision log: redis down; entries dropped'])
    failing = false
    recorder.record(decided('back', 10))
    await recorder.flush()
    expect(written.map((e) => e.requestId)).toEqual(['back'])
    expect(logs.at(-1)).toBe('decision log: writing again')
  })

  it('drops an entry whose ids are not request ids instead of writing it', async () => {
    const written: DecisionEntry[] = []
    let counted = 0
    const recorder = createDecisionRecorder({
      store: { appendDecisions: async (entries) => void written.push(...entries) },
      flushMs: 1_000,
      maxBuffered: 100,
      log: () => {},
      onDropped: (count) => {
        counted += count
      },
    })
    recorder.record(decided('x'.repeat(32 * 1024), 1))
    recorder.record(decided('ok', 2, { clientRequestId: 'client\u009b2J' }))
    recorder.record(ended('esc\u001b[2J', 3))
    recorder.record(decided('kept', 4, { clientRequestId: 'client-7' }))
    await recorder.flush()
    expect(written.map((e) => e.requestId)).toEqual(['kept'])
    expect(recorder.dropped).toBe(3)
    expect(counted).toBe(3)
  })
})
