import type { IncomingMessage, ServerResponse } from 'node:http'
import { deleteBody, objectBody, patchBody } from './decode-body.ts'
import {
  badRequest,
  forbidden,
  KubeError,
  methodNotAllowed,
  qualifiedResource,
} from './kube-error.ts'
import type { KubeObject } from './kube-object.ts'
import { objectSelector, parseFieldSelector } from './object-selector.ts'
import type { ResourceTarget } from './parse-request-path.ts'
import type { WriteOptions } from './resource-api.ts'
import { apiVersionOf, type ResourceType } from './resource-registry.ts'
import { sendJson } from './send-json.ts'
import type { KubeRequest, ServerContext } from './server-context.ts'
import { type IncludeObject, requestedTableVersion, toTable } from './to-table.ts'

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
  const { ctx, res, type, target, query } = call
  const listNamespace = target.namespace
  switch (verb) {
    case 'get':
      return sendObjects(call, [ctx.api.get(type, call.namespace, target.name ?? '')], false)
    case 'list':
      return sendObjects(call, ctx.api.list(type, listNamespace, objectSelector(query)), true)
    case 'watch': {
      const selected = objectSelector(query)
      const byName = target.name ? parseFieldSelector(`metadata.name=${target.name}`) : undefined
      const matches = byName ? (o: KubeObject) => selected(o) && byName(o) : selected
      const render = renderer(call)
      ctx.watches.serve(res, { type, namespace: listNamespace, matches, query, render })
      return
    }
    case 'deletecollection': {
      const selected = objectSelector(query)
      const deleted = ctx.api.deleteCollection(type, listNamespace, selected, options(call))
      return answer(call, 200, listOf(type, deleted, String(ctx.store.resourceVersion)))
    }
    default:
      return serveWrite(call, verb)
  }
}

async function serveWrite(call: Call, verb: string): Promise<void> {
  const { ctx, req, type, namespace, query } = call
  const name = call.target.name ?? ''
  const limit = ctx.maxBodyBytes
  switch (verb) {
    case 'create': {
      const body = await objectBody(req, limit)
      return answer(call, 201, ctx.api.create(type, namespace, body, options(call)))
    }
    case 'update': {
      const body = await objectBody(req, limit)
      return answer(call, 200, ctx.api.replace(type, namespace, name, body, options(call)))
    }
    case 'patch': {
      const [patchType, patch] = await patchBody(req, limit, type.definedBy !== undefined)
      if (patchType === 'apply' && !query.get('fieldManager')) {
        throw badRequest('PATCH requests with apply content type must specify fieldManager')
      }
      const result = ctx.api.patch(type, namespace, name, patchType, patch, options(call))
      return answer(call, result.created ? 201 : 200, result.object)
    }
    default: {
      const body = await deleteBody(req, limit)
      return answer(call, 200, ctx.api.delete(type, namespace, name, body, options(call)))
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

function listOf(type: ResourceType, items: KubeObject[], resourceVersion: string) {
  return {
    kind: type.listKind,
    apiVersion: apiVersionOf(type),
    metadata: { resourceVersion },
    items,
  }
}

/** A list or a single object, or the Table kubectl asks for in its Accept header. */
function sendObjects(call: Call, objects: KubeObject[], asList: boolean): void {
  const resourceVersion = String(call.ctx.store.resourceVersion)
  const table = tableOf(call, objects, resourceVersion)
  if (table) sendJson(call.res, 200, table)
  else sendJson(call.res, 200, asList ? listOf(call.type, objects, resourceVersion) : objects[0])
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
