import type { IncomingMessage, ServerResponse } from 'node:http'
import { parse as parseYaml } from 'yaml'
import {
  badRequest,
  forbidden,
  KubeError,
  methodNotAllowed,
  qualifiedResource,
  unsupportedMediaType,
} from './kube-error.ts'
import type { KubeObject } from './kube-object.ts'
import { objectSelector, parseFieldSelector } from './object-selector.ts'
import type { ResourceTarget } from './parse-request-path.ts'
import { readBody } from './read-body.ts'
import type { PatchType, WriteOptions } from './resource-api.ts'
import { apiVersionOf, type ResourceType } from './resource-registry.ts'
import { sendJson } from './send-json.ts'
import type { KubeRequest, ServerContext } from './server-context.ts'
import { type IncludeObject, requestedTableVersion, toTable } from './to-table.ts'

const patchTypes: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
}

/**
 * client-go (so kubectl) sends credentials only over TLS, never to an http:// server: its
 * requests arrive without a token, and are let in as the anonymous user.
 */
export const anonymous = 'system:anonymous'

interface Call {
  ctx: ServerContext
  req: IncomingMessage
  res: ServerResponse
  type: ResourceType
  target: ResourceTarget
  query: URLSearchParams
  namespace: string
  /** Sent as `Warning: 299` headers with the answer. */
  warnings: string[]
}

type FieldValidation = NonNullable<WriteOptions['fieldValidation']>
const fieldValidations = ['Ignore', 'Warn', 'Strict']

function pathNotFound(): KubeError {
  return new KubeError(404, 'NotFound', 'the server could not find the requested resource')
}

/** Serves one request on a resource (or its status subresource). */
export async function handleResource(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  target: ResourceTarget,
  record: KubeRequest,
): Promise<void> {
  const query = new URL(req.url ?? '/', 'http://localhost').searchParams
  const type = ctx.registry.find(target.group, target.version, target.plural)
  if (!type) throw pathNotFound()
  const verb = verbOf(req.method ?? '', target, query)
  record.verb = verb
  checkScope(type, target, verb)
  authorize(ctx, record, type)
  const warnings: string[] = []
  const call = { ctx, req, res, type, target, query, namespace: target.namespace ?? '', warnings }
  await serveVerb(call, verb)
}

function verbOf(method: string, target: ResourceTarget, query: URLSearchParams): string {
  const named = target.name !== undefined
  const watching = query.get('watch') === 'true' || query.get('watch') === '1'
  if (method === 'GET') return watching ? 'watch' : named ? 'get' : 'list'
  if (method === 'POST' && !named) return 'create'
  if (method === 'PUT' && named) return 'update'
  if (method === 'PATCH' && named) return 'patch'
  if (method === 'DELETE') return named ? 'delete' : 'deletecollection'
  throw methodNotAllowed()
}

function checkScope(type: ResourceType, target: ResourceTarget, verb: string): void {
  if (!type.namespaced && target.namespace !== undefined) throw pathNotFound()
  if (type.namespaced && target.namespace === undefined && verb !== 'list' && verb !== 'watch') {
    if (target.name !== undefined) throw pathNotFound()
    throw methodNotAllowed()
  }
  if (target.subresource === undefined) return
  if (target.subresource !== 'status' || !type.statusSubresource) throw pathNotFound()
  if (verb !== 'get' && verb !== 'update' && verb !== 'patch') throw methodNotAllowed()
}

function authorize(ctx: ServerContext, record: KubeRequest, type: ResourceType): void {
  const resource = record.subresource ? `${type.plural}/${record.subresource}` : type.plural
  const names = [resource, qualifiedResource({ group: type.group, plural: resource }), '*']
  const denied = ctx.faults.forbidden.some(
    (rule) =>
      rule.token === (record.token ?? anonymous) &&
      (rule.verbs === undefined || rule.verbs.includes(record.verb ?? '')) &&
      (rule.resources === undefined || rule.resources.some((r) => names.includes(r))),
  )
  if (!denied) return
  const subject = record.name
    ? `${qualifiedResource(type)} "${record.name}"`
    : qualifiedResource(type)
  const scope = record.namespace ? `in the namespace "${record.namespace}"` : 'at the cluster scope'
  throw forbidden(
    `${subject} is forbidden: User "${record.token ?? anonymous}" cannot ${record.verb} resource "${resource}" in API group "${type.group}" ${scope}`,
  )
}

async function serveVerb(call: Call, verb: string): Promise<void> {
  const { ctx, res, type, target, query, namespace } = call
  const name = target.name ?? ''
  const listNamespace = target.namespace
  switch (verb) {
    case 'get':
      return sendObjects(call, 200, [ctx.api.get(type, namespace, name)], false)
    case 'list':
      return sendObjects(call, 200, ctx.api.list(type, listNamespace, objectSelector(query)), true)
    case 'watch': {
      const selected = objectSelector(query)
      const byName = target.name ? parseFieldSelector(`metadata.name=${target.name}`) : undefined
      const matches = byName ? (o: KubeObject) => selected(o) && byName(o) : selected
      ctx.watches.serve(res, {
        type,
        namespace: listNamespace,
        matches,
        query,
        render: renderer(call),
      })
      return
    }
    case 'create':
      return answer(
        call,
        201,
        ctx.api.create(type, namespace, await objectBody(call), options(call)),
      )
    case 'update': {
      const body = await objectBody(call)
      return answer(call, 200, ctx.api.replace(type, namespace, name, body, options(call)))
    }
    case 'patch': {
      const [patchType, patch] = await patchBody(call)
      if (patchType === 'apply' && !query.get('fieldManager')) {
        throw badRequest('PATCH requests with apply content type must specify fieldManager')
      }
      const result = ctx.api.patch(type, namespace, name, patchType, patch, options(call))
      return answer(call, result.created ? 201 : 200, result.object)
    }
    case 'delete':
      return answer(
        call,
        200,
        ctx.api.delete(type, namespace, name, await deleteBody(call), options(call)),
      )
    default: {
      const deleted = ctx.api.deleteCollection(
        type,
        listNamespace,
        objectSelector(query),
        options(call),
      )
      return answer(call, 200, listOf(type, deleted, String(ctx.store.resourceVersion)))
    }
  }
}

/** A write's answer, with the warnings it produced (unknown fields pruned under Warn). */
function answer(call: Call, code: number, body: unknown): void {
  if (call.warnings.length > 0) {
    call.res.setHeader(
      'Warning',
      call.warnings.map((w) => `299 - ${JSON.stringify(w)}`),
    )
  }
  sendJson(call.res, code, body)
}

function options(call: Call): WriteOptions {
  const { query, target, req } = call
  const dryRun = query.getAll('dryRun')
  if (dryRun.some((value) => value !== 'All'))
    throw badRequest(`unsupported dry run value: ${dryRun.join(',')}`)
  const validation = query.get('fieldValidation')
  if (validation !== null && !fieldValidations.includes(validation)) {
    throw badRequest(`invalid fieldValidation: ${validation}`)
  }
  const agent = req.headers['user-agent']?.split('/')[0]
  const fieldManager = query.get('fieldManager') ?? (agent || undefined)
  return {
    ...(target.subresource === 'status' ? { subresource: 'status' as const } : {}),
    dryRun: dryRun.includes('All'),
    ...(fieldManager ? { fieldManager } : {}),
    ...(validation ? { fieldValidation: validation as FieldValidation } : {}),
    warnings: call.warnings,
  }
}

function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
}

async function objectBody(call: Call): Promise<unknown> {
  const type = mediaType(call.req)
  if (type !== '' && type !== 'application/json' && type !== 'application/yaml') {
    throw unsupportedMediaType(type, ['application/json', 'application/yaml'])
  }
  const text = await readBody(call.req, call.ctx.maxBodyBytes)
  return type === 'application/yaml' ? decodeYaml(text) : decodeJson(text)
}

async function patchBody(call: Call): Promise<[PatchType, unknown]> {
  const type = mediaType(call.req)
  const patchType = patchTypes[type]
  const customResource = call.type.definedBy !== undefined
  if (!patchType || (patchType === 'strategic' && customResource)) {
    const accepted = Object.keys(patchTypes).filter(
      (t) => !customResource || !t.includes('strategic'),
    )
    throw unsupportedMediaType(type, accepted)
  }
  const text = await readBody(call.req, call.ctx.maxBodyBytes)
  return [patchType, patchType === 'apply' ? decodeYaml(text) : decodeJson(text)]
}

async function deleteBody(call: Call): Promise<unknown> {
  const text = await readBody(call.req, call.ctx.maxBodyBytes)
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

/** Go's JSON decoding (so the real server's) stops at 10000 levels; so does this one. */
const maxDepth = 10_000

function withinDepth(value: unknown): unknown {
  const pending: [unknown, number][] = [[value, 1]]
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, depth] = next
    if (typeof node !== 'object' || node === null) continue
    if (depth > maxDepth)
      throw badRequest(`the body of the request is nested deeper than ${maxDepth}`)
    for (const child of Object.values(node)) pending.push([child, depth + 1])
  }
  return value
}

function decodeYaml(text: string): unknown {
  try {
    return withinDepth(parseYaml(text, { maxAliasCount: 100 }))
  } catch (error) {
    throw badRequest(
      `the body of the request could not be decoded as YAML: ${(error as Error).message}`,
    )
  }
}

function listOf(type: ResourceType, items: KubeObject[], resourceVersion: string) {
  return {
    kind: type.listKind,
    apiVersion: apiVersionOf(type),
    metadata: { resourceVersion },
    items,
  }
}

/** A list or a single object, or the Table kubectl asks for in its Accept header. */
function sendObjects(call: Call, code: number, objects: KubeObject[], asList: boolean): void {
  const resourceVersion = String(call.ctx.store.resourceVersion)
  const table = tableOf(call, objects, resourceVersion)
  if (table) sendJson(call.res, code, table)
  else sendJson(call.res, code, asList ? listOf(call.type, objects, resourceVersion) : objects[0])
}

function tableOf(call: Call, objects: KubeObject[], resourceVersion: string) {
  const version = requestedTableVersion(call.req.headers.accept)
  if (!version) return undefined
  const include = (call.query.get('includeObject') ?? 'Metadata') as IncludeObject
  return toTable(call.type, objects, {
    version,
    resourceVersion,
    includeObject: ['None', 'Object'].includes(include) ? include : 'Metadata',
    now: call.ctx.now(),
  })
}

/** Watch events carry one-row Tables when the Accept header asks for Tables. */
function renderer(call: Call): (object: KubeObject) => unknown {
  if (!requestedTableVersion(call.req.headers.accept)) return (object) => object
  return (object) => tableOf(call, [object], object.metadata.resourceVersion ?? '')
}
