/**
 * GPT-2's byte-level alphabet: every byte is shown as a printable character, bytes that
 * already are printable Latin-1 as themselves and the rest (controls, space, ...) as
 * U+0100 and up, so the space byte 0x20 becomes "Ġ" and "\n" becomes "Ċ".
 */
function byteLevelAlphabet(): string[] {
  const printable = (byte: number) =>
    (byte >= 0x21 && byte <= 0x7e) || (byte >= 0xa1 && byte <= 0xac) || byte >= 0xae
  const alphabet: string[] = []
  let next = 0x100
  for (let byte = 0; byte < 256; byte++) {
    alphabet.push(String.fromCodePoint(printable(byte) ? byte : next++))
  }
  return alphabet
}

const alphabet = byteLevelAlphabet()
const utf8 = new TextEncoder()

/** The UTF-8 bytes of `text` written in the byte-level alphabet, as BPE vocabularies spell them. */
export function toByteLevel(text: string): string {
  let out = ''
  for (const byte of utf8.encode(text)) out += alphabet[byte]
  return out
}

const byteOf = new Map(alphabet.map((char, byte) => [char, byte]))

/**
 * The bytes a vocabulary token stands for. A token with a character outside the
 * byte-level alphabet (an added token could have one) stands for its own UTF-8 bytes,
 * as in the `tokenizers` ByteLevel decoder.
 */
export function fromByteLevel(token: string): Uint8Array {
  const bytes: number[] = []
  for (const char of token) {
    const byte = byteOf.get(char)
    if (byte === undefined) return utf8.encode(token)
    bytes.push(byte)
  }
  return Uint8Array.from(bytes)
}
