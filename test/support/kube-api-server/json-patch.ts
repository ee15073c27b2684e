import { isRecord, jsonEqual } from './kube-object.ts'
import { setOwn } from './merge-patch.ts'

/** A patch document that is not a list of RFC 6902 operations. */
export class JsonPatchSyntaxError extends Error {}
/** A well-formed operation that does not apply to the document. */
export class JsonPatchApplyError extends Error {}

interface Operation {
  op: string
  path: string
  from?: string
  value?: unknown
}

const ops = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test'])

export function parseJsonPatch(patch: unknown): Operation[] {
  if (!Array.isArray(patch)) throw new JsonPatchSyntaxError('a JSON patch must be an array')
  return patch.map((operation, index) => {
    if (!isRecord(operation) || typeof operation.op !== 'string' || !ops.has(operation.op)) {
      throw new JsonPatchSyntaxError(`operation ${index}: unknown or missing "op"`)
    }
    if (typeof operation.path !== 'string') {
      throw new JsonPatchSyntaxError(`operation ${index}: missing "path"`)
    }
    const needsFrom = operation.op === 'move' || operation.op === 'copy'
    if (needsFrom && typeof operation.from !== 'string') {
      throw new JsonPatchSyntaxError(`operation ${index}: missing "from"`)
    }
    const needsValue =
      operation.op === 'add' || operation.op === 'replace' || operation.op === 'test'
    if (needsValue && !('value' in operation)) {
      throw new JsonPatchSyntaxError(`operation ${index}: missing "value"`)
    }
    return operation as unknown as Operation
  })
}

/** RFC 6902 JSON Patch, applied to a copy of the document. */
export function applyJsonPatch(document: unknown, patch: unknown): unknown {
  let doc = structuredClone(document)
  for (const operation of parseJsonPatch(patch)) doc = applyOperation(doc, operation)
  return doc
}

function applyOperation(doc: unknown, operation: Operation): unknown {
  const path = parsePointer(operation.path)
  switch (operation.op) {
    case 'add':
      return add(doc, path, structuredClone(operation.value))
    case 'remove':
      return remove(doc, path).doc
    case 'replace':
      return add(remove(doc, path).doc, path, structuredClone(operation.value))
    case 'move': {
      const from = parsePointer(operation.from ?? '')
      if (operation.path.startsWith(`${operation.from}/`)) {
        throw new JsonPatchApplyError(`cannot move ${operation.from} into its own child`)
      }
      const removed = remove(doc, from)
      return add(removed.doc, path, removed.value)
    }
    case 'copy':
      return add(doc, path, structuredClone(get(doc, parsePointer(operation.from ?? ''))))
    default:
      if (!jsonEqual(get(doc, path), operation.value)) {
        throw new JsonPatchApplyError(`testing value ${operation.path} failed`)
      }
      return doc
  }
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return []
  if (!pointer.startsWith('/')) throw new JsonPatchSyntaxError(`invalid JSON pointer "${pointer}"`)
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
}

function arrayIndex(array: unknown[], token: string, forInsert: boolean): number {
  if (forInsert && token === '-') return array.length
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new JsonPatchApplyError(`invalid index "${token}"`)
  const index = Number(token)
  if (index > array.length || (!forInsert && index === array.length)) {
    throw new JsonPatchApplyError(`index ${token} out of bounds`)
  }
  return index
}

function get(doc: unknown, path: string[]): unknown {
  let node = doc
  for (const token of path) {
    if (Array.isArray(node)) node = node[arrayIndex(node, token, false)]
    else if (isRecord(node) && Object.hasOwn(node, token)) node = node[token]
    else throw new JsonPatchApplyError(`path /${path.join('/')} does not exist`)
  }
  return node
}

function add(doc: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value
  const parent = get(doc, path.slice(0, -1))
  const last = path.at(-1) ?? ''
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true), 0, value)
  else if (isRecord(parent)) setOwn(parent, last, value)
  else throw new JsonPatchApplyError(`path /${path.join('/')}: parent is not a container`)
  return doc
}

function remove(doc: unknown, path: string[]): { doc: unknown; value: unknown } {
  if (path.length === 0) return { doc: null, value: doc }
  const parent = get(doc, path.slice(0, -1))
  const last = path.at(-1) ?? ''
  if (Array.isArray(parent)) {
    const [value] = parent.splice(arrayIndex(parent, last, false), 1)
    return { doc, value }
  }
  if (isRecord(parent) && Object.hasOwn(parent, last)) {
    const value = parent[last]
    delete parent[last]
    return { doc, value }
  }
  throw new JsonPatchApplyError(`path /${path.join('/')} does not exist`)
}
