import type { IncomingMessage } from 'node:http'
import { parse as parseYaml } from 'yaml'
import type { PatchType } from './apply-patch.ts'
import { badRequest, unsupportedMediaType } from './kube-error.ts'
import { readBody } from './read-body.ts'

const patchTypes: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
}

/** Go's JSON decoding (so the real server's) stops at 10000 levels; so does this one. */
const maxDepth = 10_000

function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
}

/** A create or update body: JSON or YAML (protobuf is not understood: 415). */
export async function objectBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const type = mediaType(req)
  if (type !== '' && type !== 'application/json' && type !== 'application/yaml') {
    throw unsupportedMediaType(type, ['application/json', 'application/yaml'])
  }
  const text = await readBody(req, limit)
  return type === 'application/yaml' ? decodeYaml(text) : decodeJson(text)
}

/** A patch and its type; custom resources take no strategic merge patch, as for real. */
export async function patchBody(
  req: IncomingMessage,
  limit: number,
  customResource: boolean,
): Promise<[PatchType, unknown]> {
  const type = mediaType(req)
  const patchType = patchTypes[type]
  if (!patchType || (patchType === 'strategic' && customResource)) {
    const accepted = Object.keys(patchTypes).filter(
      (t) => !customResource || !t.includes('strategic'),
    )
    throw unsupportedMediaType(type, accepted)
  }
  const text = await readBody(req, limit)
  return [patchType, patchType === 'apply' ? decodeYaml(text) : decodeJson(text)]
}

/** DeleteOptions, which clients may leave out. */
export async function deleteBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const text = await readBody(req, limit)
  return text.trim() === '' ? {} : decodeJson(text)
}

function decodeJson(text: string): unknown {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw badRequest(`the body of the request could not be decoded: ${(error as Error).message}`)
  }
  return withinDepth(value)
}

function decodeYaml(text: string): unknown {
  let value: unknown
  try {
    value = parseYaml(text, { maxAliasCount: 100 })
  } catch (error) {
    const why = (error as Error).message
    throw badRequest(`the body of the request could not be decoded as YAML: ${why}`)
  }
  return withinDepth(value)
}

function withinDepth(value: unknown): unknown {
  const pending: [unknown, number][] = [[value, 1]]
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, depth] = next
    if (typeof node !== 'object' || node === null) continue
    if (depth > maxDepth) {
      throw badRequest(`the body of the request is nested deeper than ${maxDepth}`)
    }
    for (const child of Object.values(node)) pending.push([child, depth + 1])
  }
  return value
}
