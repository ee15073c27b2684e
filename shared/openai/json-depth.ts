/**
 * How deeply a request body may nest objects and arrays (the body itself is level 1), at
 * the edge and at the scorer alike: OpenAI's requests need a handful of levels (tool
 * schemas a few more), and every level past this is work (walks, copies, serialisation)
 * that a hostile body makes someone do. The same 64 levels as `kinfctl validate`'s inputs.
 */
export const maxJsonDepth = 64

/**
 * Whether a parsed JSON value nests objects and arrays more than `limit` levels deep.
 * Iterative, and it stops at the first branch past the limit, so no depth can overflow the
 * stack or make it walk the rest.
 */
export function jsonDepthExceeds(value: unknown, limit: number = maxJsonDepth): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }]
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item.value !== 'object' || item.value === null) continue
    if (item.depth > limit) return true
    const children = Array.isArray(item.value) ? item.value : Object.values(item.value)
    for (const child of children)
      if (typeof child === 'object' && child !== null)
        stack.push({ value: child, depth: item.depth + 1 })
  }
  return false
}
