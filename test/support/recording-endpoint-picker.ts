/**
 * An EndpointPicker for protocol tests: it answers each pick with `answer` and records every
 * call of every exchange (one per ext_proc stream), so tests can check what the protocol
 * side passed on and that close came exactly once.
 */
import type {
  EndpointPicker,
  Pick,
  PickedResponse,
  PickInput,
} from '../../control-plane/scorer/epp/endpoint-picker.ts'

export interface RecordedExchange {
  signal: AbortSignal
  picks: PickInput[]
  responses: PickedResponse[]
  chunks: { chunk: Buffer; endOfStream: boolean }[]
  closes: ('completed' | 'aborted')[]
  /** Resolves with the first close's outcome. */
  closed: Promise<'completed' | 'aborted'>
}

export interface RecordingEndpointPicker {
  picker: EndpointPicker
  exchanges: RecordedExchange[]
  setReady(ready: boolean): void
  /** Resolves when the n-th exchange (1-based) has been opened. */
  opened(count: number): Promise<RecordedExchange>
}

export type PickAnswer = (input: PickInput, signal: AbortSignal) => Pick | Promise<Pick>

export const pickFirstTwo: PickAnswer = () => ({
  kind: 'endpoints',
  endpoints: ['10.0.0.1:8000', '10.0.0.2:8000'],
  headers: { 'x-kinference-engine': 'primary' },
})

export function recordingEndpointPicker(
  answer: PickAnswer = pickFirstTwo,
): RecordingEndpointPicker {
  let ready = true
  const exchanges: RecordedExchange[] = []
  const openWaiters: (() => void)[] = []
  const picker: EndpointPicker = {
    ready: () => ready,
    exchange(signal) {
      let settle: (outcome: 'completed' | 'aborted') => void = () => {}
      const record: RecordedExchange = {
        signal,
        picks: [],
        responses: [],
        chunks: [],
        closes: [],
        closed: new Promise((resolve) => {
          settle = resolve
        }),
      }
      exchanges.push(record)
      for (const wake of openWaiters.splice(0)) wake()
      return {
        pick(input) {
          record.picks.push(input)
          return Promise.resolve(answer(input, signal))
        },
        responseHeaders: (response) => record.responses.push(response),
        responseBody: (chunk, endOfStream) =>
          record.chunks.push({ chunk: Buffer.from(chunk), endOfStream }),
        close(outcome) {
          record.closes.push(outcome)
          settle(outcome)
        },
      }
    },
  }
  function opened(count: number): Promise<RecordedExchange> {
    return new Promise((resolve) => {
      const check = (): void => {
        const record = exchanges[count - 1]
        if (record) resolve(record)
        else openWaiters.push(check)
      }
      check()
    })
  }
  return { picker, exchanges, setReady: (value) => (ready = value), opened }
}
