import { describe, expect, it } from 'vitest'
import {
  immediateResponse,
  readHeaderMap,
  readServedEndpoint,
  readSubsetHint,
  routeResponse,
  streamedChunks,
} from '../../../../control-plane/scorer/epp/ext-proc-messages.ts'

const hint = (value: object) => ({
  filter_metadata: {
    'envoy.lb.subset_hint': { fields: { 'x-gateway-destination-endpoint-subset': value } },
  },
})

describe('ext_proc messages', () => {
  it('reads headers from raw_value or value, lower-cased, repeats joined', () => {
    const headers = readHeaderMap({
      headers: [
        { key: ':Path', raw_value: Buffer.from('/v1/chat/completions') },
        { key: 'X-Tag', value: 'a' },
        { key: 'x-tag', raw_value: Buffer.from('b') },
        { key: 'empty', raw_value: Buffer.alloc(0), value: '' },
      ],
    })
    expect(headers).toEqual({ ':path': '/v1/chat/completions', 'x-tag': 'a, b', empty: '' })
    expect(() => readHeaderMap({ headers: [{ value: 'x' }] })).toThrow(/without a key/)
  })

  it('reads the subset hint as a list, a comma string, or nothing; never widened', () => {
    expect(readSubsetHint(undefined)).toBeNull()
    expect(readSubsetHint({ filter_metadata: {} })).toBeNull()
    expect(readSubsetHint(hint({ stringValue: '1.1.1.1:80, 2.2.2.2:80,' }))).toEqual([
      '1.1.1.1:80',
      '2.2.2.2:80',
    ])
    expect(
      readSubsetHint(
        hint({
          listValue: {
            values: [{ stringValue: '1.1.1.1:80' }, { stringValue: '3.3.3.3:80,4.4.4.4:80' }],
          },
        }),
      ),
    ).toEqual(['1.1.1.1:80', '3.3.3.3:80', '4.4.4.4:80'])
    expect(readSubsetHint(hint({ numberValue: 3 }))).toEqual([])
  })

  it('reads the served endpoint', () => {
    const served = {
      filter_metadata: {
        'envoy.lb': {
          fields: { 'x-gateway-destination-endpoint-served': { stringValue: '1.1.1.1:80' } },
        },
      },
    }
    expect(readServedEndpoint(served)).toBe('1.1.1.1:80')
    expect(readServedEndpoint(undefined)).toBeNull()
  })

  it('routes with one string in the header and the metadata, ours winning over the pick headers', () => {
    const route = routeResponse(
      ['1.1.1.1:80', '2.2.2.2:80'],
      { 'x-engine': 'b', 'Content-Length': '9' },
      12,
    )
    const set = route.common.header_mutation?.set_headers.map((option) => [
      option.header.key,
      option.header.raw_value.toString(),
    ])
    expect(set).toEqual([
      ['x-gateway-destination-endpoint', '1.1.1.1:80,2.2.2.2:80'],
      ['x-engine', 'b'],
      ['content-length', '12'],
    ])
    expect(
      route.common.header_mutation?.set_headers.every(
        (option) => option.append_action === 'OVERWRITE_IF_EXISTS_OR_ADD',
      ),
    ).toBe(true)
    expect(route.metadata).toEqual({
      fields: {
        'envoy.lb': {
          structValue: {
            fields: { 'x-gateway-destination-endpoint': { stringValue: '1.1.1.1:80,2.2.2.2:80' } },
          },
        },
      },
    })
  })

  it('chunks a streamed body, the last chunk ending it; an empty body is one empty chunk', () => {
    const sizes = (body: Buffer, end: boolean) =>
      streamedChunks(body, end).map((chunk) => [
        chunk.body_mutation?.streamed_response.body.length,
        chunk.body_mutation?.streamed_response.end_of_stream,
      ])
    expect(sizes(Buffer.alloc(124_001), true)).toEqual([
      [62_000, false],
      [62_000, false],
      [1, true],
    ])
    expect(sizes(Buffer.alloc(62_000), true)).toEqual([[62_000, true]])
    expect(sizes(Buffer.alloc(0), true)).toEqual([[0, true]])
    expect(sizes(Buffer.alloc(0), false)).toEqual([])
  })

  it('builds an immediate response with a JSON content type unless the pick gives one', () => {
    const keys = (headers: Record<string, string>) =>
      immediateResponse(429, '{}', headers).immediate_response?.headers.set_headers.map(
        (option) => [option.header.key, option.header.raw_value.toString()],
      )
    expect(keys({ 'retry-after': '1' })).toEqual([
      ['content-type', 'application/json'],
      ['retry-after', '1'],
    ])
    expect(keys({ 'content-type': 'text/plain' })).toEqual([['content-type', 'text/plain']])
  })
})
