/**
 * The port between the Endpoint Picker's protocol (Envoy's ext_proc over gRPC, in
 * ext-proc-server.ts) and what picks: the scorer's pools (scorer-endpoint-picker.ts). One
 * ext_proc stream carries one HTTP request through the gateway; the protocol side turns
 * its messages into these calls, in this order: pick once the request's body has ended,
 * then the response's head, its body chunks, and close when the stream ends, however it
 * ends.
 */

/** The request as the gateway saw it, once its body has ended. */
export interface PickInput {
  /**
   * Envoy's request headers, names lower-case, pseudo-headers included (`:method`,
   * `:path`, `:authority`); a repeated header's values joined with ", ".
   */
  headers: Readonly<Record<string, string>>
  /** The whole request body (empty for a request without one). */
  body: Buffer
  /**
   * The endpoints (`ip:port`) the data plane allows for this request
   * (`envoy.lb.subset_hint` / `x-gateway-destination-endpoint-subset`); null without a hint.
   * With a hint, only these may be picked; an empty hint allows none.
   */
  subset: readonly string[] | null
}

/** What the picker answers for a request. */
export type Pick =
  | {
      kind: 'endpoints'
      /** `ip:port`, the primary first, then the fallbacks the data plane may retry in order. */
      endpoints: readonly string[]
      /** More request headers for the pod (names lower-case), e.g. which engine of a pod. */
      headers: Readonly<Record<string, string>>
    }
  | {
      kind: 'refused'
      /** The HTTP status of the ImmediateResponse: 503 nothing ready, 429 shed, 4xx bad input. */
      status: number
      /** Its body (OpenAI's error JSON). */
      body: string
      /** Its headers (names lower-case), e.g. retry-after. */
      headers: Readonly<Record<string, string>>
    }

/** The response's head as the data plane reports it. */
export interface PickedResponse {
  /** `:status` of the response headers. */
  status: number
  /**
   * The endpoint that actually served the request (`envoy.lb` /
   * `x-gateway-destination-endpoint-served` in the response's metadata); null when the
   * data plane did not say.
   */
  served: string | null
  headers: Readonly<Record<string, string>>
}

/** One request's exchange with the picker: one ext_proc stream. */
export interface EppExchange {
  /**
   * Picks the endpoints for the request. May wait (a request held for its pod); `signal`
   * (given to EndpointPicker.exchange) aborts when the stream goes away. A rejection that is
   * not a refusal makes the protocol side end the stream with a gRPC error, so the gateway
   * applies its failure mode.
   */
  pick(input: PickInput): Promise<Pick>
  /** The response's head went by. */
  responseHeaders(response: PickedResponse): void
  /** A chunk of the response's body went by (already passed on unchanged). */
  responseBody(chunk: Buffer, endOfStream: boolean): void
  /**
   * The stream ended: `completed` after the response's end (its body's end of stream, or
   * its trailers), `aborted` when it ended before (the client or the gateway went away, or
   * the request was refused). Called exactly once, also when pick never was.
   */
  close(outcome: 'completed' | 'aborted'): void
}

export interface EndpointPicker {
  /** A new stream; `signal` aborts when the gateway cancels it. */
  exchange(signal: AbortSignal): EppExchange
  /** Whether this picker can pick now (the gRPC health service's readiness). */
  ready(): boolean
}
