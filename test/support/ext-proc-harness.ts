/**
 * An Endpoint Picker server (plaintext, on a free port) over a recording picker, and a
 * client that replays Envoy against it: what the protocol tests share.
 */
import {
  type ExtProcServer,
  startExtProcServer,
} from '../../control-plane/scorer/epp/ext-proc-server.ts'
import { createExtProcClient, type ExtProcClient } from './ext-proc-client.ts'
import {
  type PickAnswer,
  pickFirstTwo,
  type RecordedExchange,
  type RecordingEndpointPicker,
  recordingEndpointPicker,
} from './recording-endpoint-picker.ts'

export interface ExtProcHarness {
  server: ExtProcServer
  client: ExtProcClient
  recording: RecordingEndpointPicker
  /** Every line the server logged. */
  logged: string[]
  /** How the picker answers from now on (pickFirstTwo until set). */
  answer(answer: PickAnswer): void
  /** The exchange of the latest stream. */
  last(): RecordedExchange
  close(): Promise<void>
}

export async function startExtProcHarness(maxBodyBytes?: number): Promise<ExtProcHarness> {
  let current: PickAnswer = pickFirstTwo
  const logged: string[] = []
  const recording = recordingEndpointPicker((input, signal) => current(input, signal))
  const server = await startExtProcServer({
    host: '127.0.0.1',
    port: 0,
    tls: null,
    picker: recording.picker,
    ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
    log: (message) => logged.push(message),
  })
  const client = createExtProcClient(`127.0.0.1:${server.port}`)
  return {
    server,
    client,
    recording,
    logged,
    answer(answer) {
      current = answer
    },
    last() {
      const record = recording.exchanges.at(-1)
      if (!record) throw new Error('no stream has been opened')
      return record
    },
    async close() {
      client.close()
      await server.close(0)
    },
  }
}

/** A streamed chat request's body, as the tests replay it. */
export const replayChatBody = JSON.stringify({
  model: 'llama',
  stream: true,
  messages: [{ role: 'user', content: 'hello' }],
})

/** An OpenAI SSE answer: two deltas, the usage chunk, [DONE]. */
export const replaySseChunks = [
  'data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n',
  'data: {"choices":[{"delta":{"content":"lo"}}]}\n\n',
  'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}\n\n',
  'data: [DONE]\n\n',
]
