import { expect, it } from 'vitest'
import type { ResponseStore } from '../../shared/openai/responses/response-store.ts'

/** A clock the conformance suite moves; a store that expires by wall time may ignore it. */
export interface TestClock {
  nowMs: number
}

/**
 * What every ResponseStore must do: keep a conversation per tenant and id, never give one
 * tenant another's, and forget it after its TTL. `expire` moves time past a TTL (the clock
 * for the memory store; a real wait for Redis's PX).
 */
export function responseStoreConformance(
  make: (clock: TestClock) => Promise<ResponseStore>,
  expire: (clock: TestClock, ms: number) => Promise<void> = async (clock, ms) => {
    clock.nowMs += ms
  },
): void {
  const conversation = {
    model: 'm',
    messages: [
      { role: 'user' as const, content: 'Hi' },
      { role: 'assistant' as const, content: 'Hello' },
    ],
  }

  it('keeps a conversation for its tenant, and for no other', async () => {
    const store = await make({ nowMs: 0 })
    await store.put('tenant-a', 'resp_1', conversation, 60_000)
    expect(await store.get('tenant-a', 'resp_1')).toEqual(conversation)
    expect(await store.get('tenant-b', 'resp_1')).toBeNull()
    expect(await store.get('tenant-a', 'resp_2')).toBeNull()
  })

  it('forgets a conversation after its TTL', async () => {
    const clock = { nowMs: 0 }
    const store = await make(clock)
    await store.put('tenant-a', 'resp_short', conversation, 50)
    await expire(clock, 120)
    expect(await store.get('tenant-a', 'resp_short')).toBeNull()
  })

  it('gives a copy: changing what it returned changes nothing stored', async () => {
    const store = await make({ nowMs: 0 })
    await store.put('t', 'resp_c', conversation, 60_000)
    const read = await store.get('t', 'resp_c')
    read?.messages.push({ role: 'user', content: 'changed' })
    expect((await store.get('t', 'resp_c'))?.messages).toHaveLength(2)
  })
}
