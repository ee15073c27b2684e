import type { FakeClock } from '../../../../control-plane/lab/bedrock-stand-in/serve-fake-converse.ts'

export interface GatedClock extends FakeClock {
  /** Waits not yet over. */
  readonly waiting: number
  /** Ends the oldest wait: its time has passed. */
  tick(): void
}

/**
 * A clock whose time moves only when the test says: each sleep waits for a tick, so a
 * paced answer generates exactly one token a tick, whatever the machine's speed.
 */
export function gatedClock(): GatedClock {
  let now = 0
  const waits: { ms: number; resolve: () => void }[] = []
  return {
    now: () => now,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        const wait = { ms, resolve }
        waits.push(wait)
        signal.addEventListener(
          'abort',
          () => {
            const at = waits.indexOf(wait)
            if (at >= 0) waits.splice(at, 1)
            resolve()
          },
          { once: true },
        )
      }),
    get waiting() {
      return waits.length
    },
    tick() {
      const wait = waits.shift()
      if (!wait) throw new Error('nothing is waiting')
      now += wait.ms
      wait.resolve()
    },
  }
}
