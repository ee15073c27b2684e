import { KinfError } from '../errors/kinf-error.ts'

/**
 * How deeply a request body may nest objects and arrays (the body itself is level 1), at
 * the edge and at the scorer alike: OpenAI's requests need a handful of levels (tool
 * schemas a few more), and every level past this is work (walks, copies, serialisation)
 * that a hostile body makes someone do. The same 64 levels as `kinfctl validate`'s inputs.
 */
export const maxJsonDepth = 64

/**
 * Refuses (400) a parsed body that nests objects and arrays more than `limit` levels
 * deep; `param` names the field the nesting starts in (its first three path segments,
 * without trailing indices). Iterative, and it stops at the first branch past the limit,
 * so no depth overflows the stack or makes it walk the rest.
 */
export function checkJsonDepth(value: unknown, limit: number = maxJsonDepth): void {
  const stack: { value: unknown; path: readonly (string | number)[] }[] = [{ value, path: [] }]
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item.value !== 'object' || item.value === null) continue
    if (item.path.length >= limit) throw tooDeep(item.path, limit)
    const entries = Array.isArray(item.value) ? item.value.entries() : Object.entries(item.value)
    for (const [key, child] of entries)
      if (typeof child === 'object' && child !== null)
        stack.push({ value: child, path: [...item.path, key] })
  }
}

function tooDeep(path: readonly (string | number)[], limit: number): KinfError {
  const head = path.slice(0, 3)
  while (typeof head.at(-1) === 'number') head.pop()
  return new KinfError(
    'invalid_request',
    `the JSON body is nested more than ${limit} levels deep, more than this service accepts`,
    { param: head.length > 0 ? head.join('.') : null },
  )
}
