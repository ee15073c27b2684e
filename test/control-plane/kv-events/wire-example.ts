import type { EventBatch } from '../../../control-plane/kv-events/kv-cache-event.ts'

/** docs/vllm-wire.md §1.6, byte for byte (whitespace removed, `0102…10` written out). */
export const docExample = {
  topic: '6b762d6576656e7473',
  seq0: '0000000000000000',
  legacy:
    '93cb41d954fc402000009198ab426c6f636b53746f72656491cf2ceabcfae6d332eac0' +
    'dc00100102030405060708090a0b0c0d0e0f1010c0a3475055c000',
  map:
    '93cb41d954fc402000009188a474797065ab426c6f636b53746f726564' +
    'ac626c6f636b5f686173686573' +
    '91cf2ceabcfae6d332eab1706172656e745f626c6f636b5f68617368c0' +
    'a9746f6b656e5f696473dc00100102030405060708090a0b0c0d0e0f10aa626c6f636b5f73697a6510' +
    'a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c000',
  blockRemovedLegacy: '93ac426c6f636b52656d6f76656491cf2ceabcfae6d332eaa3475055',
  allBlocksClearedLegacy: '91b0416c6c426c6f636b73436c6561726564',
  allBlocksClearedMap: '81a474797065b0416c6c426c6f636b73436c6561726564',
}

/** The input of §1.6: block_size 16, tokens 1..16, hash 0x2ceabcfae6d332ea, ts 1700000000.5, dp 0. */
export const docBatch: EventBatch = {
  ts: 1_700_000_000.5,
  events: [
    {
      type: 'BlockStored',
      blockHashes: [0x2ceabcfae6d332ean],
      parentBlockHash: null,
      tokenIds: Array.from({ length: 16 }, (_, i) => i + 1),
      blockSize: 16,
      loraId: null,
      medium: 'GPU',
      loraName: null,
    },
  ],
  dataParallelRank: 0,
}

export const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')
export const unhex = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'hex'))
