import {
  createKvEventSubscriber,
  type KvEventSubscriber,
} from '../../../control-plane/kv-events/create-kv-event-subscriber.ts'
import type { EventBatch } from '../../../control-plane/kv-events/kv-cache-event.ts'
import type { KinfError } from '../../../shared/errors/kinf-error.ts'

export interface Received {
  topic: string
  seq: bigint
  batch: EventBatch
}

/** Waits for a condition that callbacks make true; wakes on every callback, never polls. */
export function createSignal() {
  let wake: () => void = () => {}
  let woken = new Promise<void>((resolve) => {
    wake = resolve
  })
  return {
    notify() {
      wake()
      woken = new Promise<void>((resolve) => {
        wake = resolve
      })
    },
    /** True once `ready()` holds; false if it still does not after `ms` (a pacing bound, not an assertion). */
    async until(ready: () => boolean, ms = 20_000): Promise<boolean> {
      const deadline = performance.now() + ms
      while (!ready()) {
        const left = deadline - performance.now()
        if (left <= 0) return false
        let timer: NodeJS.Timeout | undefined
        await Promise.race([
          woken,
          new Promise((resolve) => {
            timer = setTimeout(resolve, left)
          }),
        ])
        clearTimeout(timer)
      }
      return true
    },
  }
}

export interface Collector {
  subscriber: KvEventSubscriber
  received: Received[]
  errors: KinfError[]
  until(ready: () => boolean, ms?: number): Promise<boolean>
}

export function collectBatches(endpoint: string, topicPrefix?: string): Collector {
  const received: Received[] = []
  const errors: KinfError[] = []
  const signal = createSignal()
  const subscriber = createKvEventSubscriber({
    endpoint,
    ...(topicPrefix === undefined ? {} : { topicPrefix }),
    onBatch(topic, seq, batch) {
      received.push({ topic, seq, batch })
      signal.notify()
    },
    onError(error) {
      errors.push(error)
      signal.notify()
    },
  })
  return { subscriber, received, errors, until: signal.until }
}

/**
 * ZMQ's slow joiner: a SUB gets nothing published before its subscription reached the
 * publisher. Send probes until one arrives (each wait is pacing, not a timing assertion),
 * and return how many were sent.
 */
export async function sendUntilReceived(
  send: () => void,
  arrived: () => boolean,
  until: (ready: () => boolean, ms?: number) => Promise<boolean>,
): Promise<number> {
  for (let probes = 1; probes <= 2_000; probes++) {
    send()
    if (await until(arrived, 25)) return probes
  }
  throw new Error('nothing arrived after 2000 probes')
}
