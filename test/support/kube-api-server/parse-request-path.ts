/** What a URL path addresses, following the API server's RequestInfo rules. */
export type RequestTarget =
  | { kind: 'version' }
  | { kind: 'health' }
  | { kind: 'openapi'; path: string[] }
  | { kind: 'core-versions' }
  | { kind: 'groups' }
  | { kind: 'group'; group: string }
  | { kind: 'resource-list'; group: string; version: string }
  | ResourceTarget

export interface ResourceTarget {
  kind: 'resource'
  group: string
  version: string
  plural: string
  namespace?: string
  name?: string
  subresource?: string
}

/** `namespaces/{name}/status` is the namespace's own subresource, not a namespaced path. */
const namespaceSubresources = new Set(['status', 'finalize'])

/** undefined when the path addresses nothing the server serves (404). */
export function parseRequestPath(pathname: string): RequestTarget | undefined {
  const parts = decodeParts(pathname)
  if (!parts) return undefined
  const [root, second, third, ...rest] = parts
  if (parts.length === 1 && root === 'version') return { kind: 'version' }
  if (parts.length === 1 && (root === 'healthz' || root === 'livez' || root === 'readyz')) {
    return { kind: 'health' }
  }
  if (root === 'openapi') return { kind: 'openapi', path: parts.slice(1) }
  if (root === 'api') {
    if (second === undefined) return { kind: 'core-versions' }
    if (second !== 'v1') return undefined
    if (third === undefined) return { kind: 'resource-list', group: '', version: 'v1' }
    return resourceTarget('', 'v1', [third, ...rest])
  }
  if (root === 'apis') {
    if (second === undefined) return { kind: 'groups' }
    if (third === undefined) return { kind: 'group', group: second }
    if (rest.length === 0) return { kind: 'resource-list', group: second, version: third }
    return resourceTarget(second, third, rest)
  }
  return undefined
}

function decodeParts(pathname: string): string[] | undefined {
  try {
    return pathname
      .split('/')
      .filter((p) => p !== '')
      .map(decodeURIComponent)
  } catch {
    return undefined
  }
}

function resourceTarget(
  group: string,
  version: string,
  parts: string[],
): ResourceTarget | undefined {
  let rest = parts
  let namespace: string | undefined
  const [first, second, third] = parts
  if (first === 'namespaces' && second !== undefined && third !== undefined) {
    if (!namespaceSubresources.has(third)) {
      namespace = second
      rest = parts.slice(2)
    }
  }
  const [plural, name, subresource, ...extra] = rest
  if (plural === undefined || extra.length > 0) return undefined
  return {
    kind: 'resource',
    group,
    version,
    plural,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(subresource !== undefined ? { subresource } : {}),
  }
}
