/**
 * How the data plane sends a stream's bodies, from the `protocol_config` Envoy puts on the
 * first ProcessingRequest (envoy/service/ext_proc/v3/external_processor.proto). Without
 * one, FULL_DUPLEX_STREAMED both ways: the only mode llm-d's EPP supports, and the default
 * of the gateways that speak the protocol (docs/endpoint-picker.md, "The protocol").
 */
import type { ExtProcBodyMode, ExtProcRequest } from './ext-proc-messages.ts'

export interface ExtProcModes {
  /**
   * The request body: `duplex` streamed in chunks and re-emitted by the picker; `buffered`
   * whole in one message (BUFFERED, BUFFERED_PARTIAL), left as it is; `none` never sent.
   */
  request: 'duplex' | 'buffered' | 'none'
  /** The data plane holds a buffered body until the request headers are answered. */
  bodyWaitsForHeaders: boolean
  /** The response body: `duplex` chunks echoed back; `other` answered CONTINUE; `none` never sent. */
  response: 'duplex' | 'other' | 'none'
  /** A request body mode the picker cannot serve (STREAMED, GRPC), or null. */
  unsupported: ExtProcBodyMode | null
}

export function readExtProcModes(config: ExtProcRequest['protocol_config']): ExtProcModes {
  if (config === undefined) {
    return { request: 'duplex', bodyWaitsForHeaders: false, response: 'duplex', unsupported: null }
  }
  // proto3 leaves NONE (0) off the wire: a config without a mode means NONE.
  const request = config.request_body_mode ?? 'NONE'
  const response = config.response_body_mode ?? 'NONE'
  const buffered = request === 'BUFFERED' || request === 'BUFFERED_PARTIAL'
  return {
    request: request === 'FULL_DUPLEX_STREAMED' ? 'duplex' : buffered ? 'buffered' : 'none',
    bodyWaitsForHeaders: buffered && config.send_body_without_waiting_for_header_response !== true,
    response:
      response === 'FULL_DUPLEX_STREAMED' ? 'duplex' : response === 'NONE' ? 'none' : 'other',
    // A streamed body's route would have to ride on its headers, before the body is seen.
    unsupported: request === 'STREAMED' || request === 'GRPC' ? request : null,
  }
}
