import { EventStreamCodec } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'

const codec = new EventStreamCodec(toUtf8, fromUtf8)

/**
 * One application/vnd.amazon.eventstream message: prelude (total and headers length, CRC),
 * headers, the JSON payload, message CRC. An event carries `:event-type`; an exception
 * carries `:exception-type` (a member name such as `modelStreamErrorException`).
 */
export function eventStreamFrame(
  kind: 'event' | 'exception',
  type: string,
  payload: unknown,
): Uint8Array {
  return codec.encode({
    headers: {
      [kind === 'event' ? ':event-type' : ':exception-type']: { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: kind },
    },
    body: fromUtf8(JSON.stringify(payload)),
  })
}
