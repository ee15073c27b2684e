import { isMap, isPair, isScalar, isSeq, type Node } from 'yaml'
import { type LoadedDocument, position, type SourcePosition } from './load-documents.ts'

/**
 * Where a field path points in the YAML source: the key of a mapping entry (so a nested
 * object's error lands on the line that names it), or the nearest existing ancestor when
 * the field is missing.
 */
export function locateField(
  loaded: LoadedDocument,
  path: readonly (string | number)[],
): SourcePosition {
  let node: unknown = loaded.document.contents
  let best = loaded.start
  for (const part of path) {
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(part),
      )
      if (!pair) break
      best = at(loaded, pair.key as Node) ?? best
      node = pair.value
    } else if (isSeq(node) && typeof part === 'number') {
      const item = node.items[part]
      if (item === undefined) break
      best = at(loaded, item as Node) ?? best
      node = item
    } else {
      break
    }
  }
  return best
}

function at(loaded: LoadedDocument, node: Node | null | undefined): SourcePosition | undefined {
  const offset = node?.range?.[0]
  return offset === undefined ? undefined : position(loaded.lineCounter, offset)
}
