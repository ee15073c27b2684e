import { describe, expect, it } from 'vitest'
import { extProcProtos } from '../../../../control-plane/scorer/epp/ext-proc-protos.ts'

describe('the vendored ext_proc protos', () => {
  const method = extProcProtos().externalProcessor.service.Process
  if (method === undefined) throw new Error('no Process method')
  const process = method

  it('are current: FULL_DUPLEX_STREAMED and streamed_response exist', () => {
    const request = process.requestDeserialize(
      process.requestSerialize({ protocol_config: { request_body_mode: 'FULL_DUPLEX_STREAMED' } }),
    )
    expect(request.protocol_config.request_body_mode).toBe('FULL_DUPLEX_STREAMED')
    const response = process.responseDeserialize(
      process.responseSerialize({
        request_body: {
          response: {
            body_mutation: { streamed_response: { body: Buffer.from('x'), end_of_stream: true } },
          },
        },
      }),
    )
    expect(response.request_body.response.body_mutation.streamed_response.body.toString()).toBe('x')
  })

  it('encode google.protobuf.Struct only with camelCase names (snake case is dropped)', () => {
    const roundTrip = (value: object) =>
      process.responseDeserialize(
        process.responseSerialize({ dynamic_metadata: { fields: { k: value } } }),
      ).dynamic_metadata
    expect(roundTrip({ stringValue: 'x' }).fields.k.stringValue).toBe('x')
    expect(roundTrip({ string_value: 'x' }).fields.k.stringValue).toBeUndefined()
  })

  it('name the HTTP status codes of envoy.type.v3', () => {
    expect(extProcProtos().httpStatusNames.get(429)).toBe('TooManyRequests')
  })
})
