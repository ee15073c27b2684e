import { describe, expect, it } from 'vitest'
import { createDecisionRecorder } from '../../../control-plane/scorer/decision-recorder.ts'
import type { DecisionEntry } from '../../../shared/state/decision-entry.ts'
import { decided } from '../../support/state-store-conformance.ts'

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
})
