import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  coreApiVersions,
  versionInfo,
} from './discovery-documents.ts'
import { handleResource } from './handle-resource.ts'
import { KubeError } from './kube-error.ts'
import { openApiGroupVersion, openApiIndex, parseOpenApiPath } from './openapi-documents.ts'
import { parseRequestPath, type RequestTarget } from './parse-request-path.ts'
import { sendError, sendJson } from './send-json.ts'
import type { KubeRequest, ServerContext } from './server-context.ts'

function pathNotFound(): KubeError {
  return new KubeError(404, 'NotFound', 'the server could not find the requested resource')
}

/** The HTTP entry point: never throws, every failure becomes a Status answer. */
export function requestHandler(ctx: ServerContext) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const record = recordRequest(ctx, req)
    handle(ctx, req, res, record)
      .catch((error: unknown) => sendError(res, error))
      .finally(() => {
        record.code = res.statusCode
      })
  }
}

function recordRequest(ctx: ServerContext, req: IncomingMessage): KubeRequest {
  let url: URL
  try {
    url = new URL(req.url ?? '/', 'http://localhost')
  } catch {
    url = new URL('http://localhost/')
  }
  const record: KubeRequest = {
    method: req.method ?? '',
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    code: 0,
    ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
  }
  ctx.requests.push(record)
  return record
}

async function handle(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  record: KubeRequest,
): Promise<void> {
  if (ctx.faults.unavailable) {
    throw new KubeError(
      503,
      'ServiceUnavailable',
      'the server is currently unable to handle the request',
    )
  }
  const target = parseRequestPath(record.path)
  if (!target) throw pathNotFound()
  if (target.kind === 'version') return sendJson(res, 200, versionInfo())
  if (target.kind === 'health') {
    res.writeHead(200, { 'Content-Type': 'text/plain' })
    res.end('ok')
    return
  }
  const authorization = req.headers.authorization
  if (authorization !== undefined) {
    const token = /^Bearer (.+)$/i.exec(authorization)?.[1]
    if (!token) throw new KubeError(401, 'Unauthorized', 'Unauthorized')
    record.token = token
  }
  if (target.kind === 'resource') {
    Object.assign(record, describeTarget(target))
    for (const hook of ctx.faults.before) hook(record)
    return handleResource(ctx, req, res, target, record)
  }
  if (req.method !== 'GET')
    throw new KubeError(
      405,
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
    )
  sendJson(res, 200, discoveryDocument(ctx, target))
}

function describeTarget(target: Extract<RequestTarget, { kind: 'resource' }>) {
  return {
    group: target.group,
    version: target.version,
    resource: target.plural,
    ...(target.subresource !== undefined ? { subresource: target.subresource } : {}),
    ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
    ...(target.name !== undefined ? { name: target.name } : {}),
  }
}

/** Discovery, and the OpenAPI v3 kubectl reads to choose server-side field validation. */
function discoveryDocument(ctx: ServerContext, target: RequestTarget): unknown {
  switch (target.kind) {
    case 'openapi':
      return openApiDocument(ctx, target.path)
    case 'core-versions':
      return coreApiVersions(ctx.serverAddress())
    case 'groups':
      return apiGroupList(ctx.registry)
    case 'group': {
      if (!ctx.registry.groupVersions().has(target.group)) throw pathNotFound()
      return apiGroup(ctx.registry, target.group)
    }
    case 'resource-list': {
      const list = apiResourceList(ctx.registry, target.group, target.version)
      if (!list) throw pathNotFound()
      return list
    }
    default:
      throw pathNotFound()
  }
}

function openApiDocument(ctx: ServerContext, path: string[]): unknown {
  const [version, ...rest] = path
  if (version !== 'v3') throw pathNotFound()
  if (rest.length === 0) return openApiIndex(ctx.registry)
  const groupVersion = parseOpenApiPath(rest)
  const document =
    groupVersion && openApiGroupVersion(ctx.registry, groupVersion.group, groupVersion.version)
  if (!document) throw pathNotFound()
  return document
}
