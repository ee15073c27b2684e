/** One ext_proc stream on the client side: what was sent, what came back, in order. */
import type { ClientDuplexStream, ServiceError } from '@grpc/grpc-js'
import type {
  ExtProcRequest,
  ExtProcStruct,
} from '../../control-plane/scorer/epp/ext-proc-messages.ts'
import { extProcProtos } from '../../control-plane/scorer/epp/ext-proc-protos.ts'

interface DecodedHeaderOption {
  header: { key: string; raw_value?: Buffer; value?: string }
  append_action?: string
}
interface DecodedCommonResponse {
  status?: string
  header_mutation?: { set_headers?: DecodedHeaderOption[] }
  body_mutation?: { streamed_response?: { body?: Buffer; end_of_stream?: boolean } }
  clear_route_cache?: boolean
}
/** A ProcessingResponse as decoded, the ImmediateResponse's status as its number. */
export interface DecodedExtProcResponse {
  response?: string
  request_headers?: { response?: DecodedCommonResponse }
  response_headers?: { response?: DecodedCommonResponse }
  request_body?: { response?: DecodedCommonResponse }
  response_body?: { response?: DecodedCommonResponse }
  request_trailers?: object
  response_trailers?: object
  immediate_response?: {
    status: number
    headers?: { set_headers?: DecodedHeaderOption[] }
    body?: Buffer
  }
  dynamic_metadata?: ExtProcStruct
}

/** A response, the call's gRPC error, or its clean end (status OK). */
export interface ExtProcReceived {
  kind: 'response' | 'error' | 'end'
  response?: DecodedExtProcResponse
  code: number
  details: string
}

function statusNumber(code: unknown): number {
  if (typeof code === 'number') return code
  for (const [number, name] of extProcProtos().httpStatusNames) if (name === code) return number
  return Number.NaN
}

export class ExtProcCall {
  readonly received: ExtProcReceived[] = []
  readonly #call: ClientDuplexStream<unknown, unknown>
  readonly #waiters = new Set<() => void>()

  constructor(call: ClientDuplexStream<unknown, unknown>) {
    this.#call = call
    call.on(
      'data',
      (
        response: DecodedExtProcResponse & { immediate_response?: { status?: { code?: unknown } } },
      ) => {
        const immediate = response.immediate_response
        if (immediate)
          immediate.status = statusNumber(
            (immediate.status as { code?: unknown } | undefined)?.code,
          )
        this.#record({ kind: 'response', response, code: 0, details: '' })
      },
    )
    call.on('error', (error: ServiceError) =>
      this.#record({ kind: 'error', code: error.code, details: error.details }),
    )
    call.on('end', () => {
      if (!this.finished()) this.#record({ kind: 'end', code: 0, details: 'OK' })
    })
  }

  #record(item: ExtProcReceived): void {
    this.received.push(item)
    for (const wake of [...this.#waiters]) wake()
  }

  send(message: ExtProcRequest): void {
    this.#call.write(message)
  }

  /** The data plane's end of the stream (Envoy closes it when the HTTP stream is done). */
  halfClose(): void {
    this.#call.end()
  }

  cancel(): void {
    this.#call.cancel()
  }

  /** The server ended the call (OK or an error). */
  finished(): boolean {
    return this.received.some((item) => item.kind !== 'response')
  }

  responses(): DecodedExtProcResponse[] {
    return this.received.flatMap((item) => (item.response ? [item.response] : []))
  }

  /** Resolves once `predicate` holds for what was received (checked on each arrival). */
  until(predicate: (received: readonly ExtProcReceived[]) => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = (): void => {
        if (predicate(this.received) || this.finished()) {
          this.#waiters.delete(check)
          resolve()
        }
      }
      this.#waiters.add(check)
      check()
    })
  }
}
