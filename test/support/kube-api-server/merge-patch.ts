import { isRecord } from './kube-object.ts'

/**
 * Sets an own property even for keys like `__proto__`, which JSON.parse happily produces
 * and plain assignment would turn into a prototype change.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  })
}

/** RFC 7396 JSON Merge Patch: objects merge, null deletes, everything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return structuredClone(patch)
  const result: Record<string, unknown> = isRecord(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    else setOwn(result, key, applyMergePatch(result[key], value))
  }
  return result
}

/**
 * Strategic merge patch approximated as a merge patch, after dropping its directives
 * (`$patch`, `$retainKeys`, `$setElementOrder/…`, `$deleteFromPrimitiveList/…`). Lists
 * are replaced, not merged by key: enough for the metadata and scalar edits kubectl makes.
 */
export function applyStrategicMergePatch(target: unknown, patch: unknown): unknown {
  return applyMergePatch(target, withoutDirectives(patch))
}

function withoutDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDirectives)
  if (!isRecord(value)) return value
  const result: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) {
    if (!key.startsWith('$')) setOwn(result, key, withoutDirectives(inner))
  }
  return result
}
