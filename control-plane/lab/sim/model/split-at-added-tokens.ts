interface TrieNode {
  next: Map<string, TrieNode>
  /** The added token that ends here. */
  end: string | null
}

/** A text cut into the added tokens it contains and the runs of text between them. */
export type Segment = { added: true; text: string } | { added: false; text: string }

/**
 * Cuts text where Hugging Face tokenizers cut it before anything else: at the added tokens
 * (`<|im_start|>`, `<start_of_turn>`, …), the leftmost match first and the longest at that
 * place (the Rust library's aho-corasick LeftmostLongest), so the runs between them can be
 * tokenized, and cached, on their own.
 */
export function createAddedTokenSplitter(tokens: Iterable<string>): (text: string) => Segment[] {
  const root: TrieNode = { next: new Map(), end: null }
  for (const token of tokens) {
    if (token === '') continue
    let node = root
    for (const char of token) {
      let child = node.next.get(char)
      if (child === undefined) {
        child = { next: new Map(), end: null }
        node.next.set(char, child)
      }
      node = child
    }
    node.end = token
  }
  // The first UTF-16 unit of every token: most characters start none, and skip the trie.
  const starts = new Set([...root.next.keys()].map((char) => char.charCodeAt(0)))
  return (text) => {
    const segments: Segment[] = []
    let start = 0
    let i = 0
    while (i < text.length) {
      const match = starts.has(text.charCodeAt(i)) ? longestAt(root, text, i) : null
      if (match === null) {
        i += (text.codePointAt(i) ?? 0) > 0xffff ? 2 : 1
        continue
      }
      if (i > start) segments.push({ added: false, text: text.slice(start, i) })
      segments.push({ added: true, text: match })
      i += match.length
      start = i
    }
    if (start < text.length) segments.push({ added: false, text: text.slice(start) })
    return segments
  }
}

function longestAt(root: TrieNode, text: string, at: number): string | null {
  let node: TrieNode | undefined = root
  let match: string | null = null
  let i = at
  while (i < text.length) {
    const char = String.fromCodePoint(text.codePointAt(i) ?? 0)
    node = node.next.get(char)
    if (node === undefined) break
    if (node.end !== null) match = node.end
    i += char.length
  }
  return match
}
