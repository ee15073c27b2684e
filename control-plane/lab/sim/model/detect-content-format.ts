/** vLLM's chat-template content formats: content as one string, or as OpenAI's list of parts. */
export type ContentFormat = 'string' | 'openai'

interface Node {
  type: string
  [key: string]: unknown
}

/**
 * vLLM's detection (`_detect_content_format` in vllm/renderers/hf.py): the template loops
 * over `message['content']` (or `.content`) of a message it takes from `messages`, or
 * from a variable assigned from it, slices, filters and tests included, so it reads
 * content as a list of parts; otherwise it reads one string.
 */
export function detectContentFormat(program: unknown): ContentFormat {
  const nodes = allNodes(program)
  const loops = nodes.filter((node) => node.type === 'For')
  const lists = aliasesOf(nodes, 'messages')
  const messages = loops
    .filter((loop) => lists.some((name) => reads(loop.iterable as Node, name)))
    .flatMap((loop) => loopNames(loop))
  const readsContent = loops.some((loop) =>
    messages.some((name) => reads(loop.iterable as Node, name, 'content')),
  )
  return readsContent ? 'openai' : 'string'
}

/** `messages` and every variable assigned from it, breadth first (vLLM's BFS over Assign). */
function aliasesOf(nodes: Node[], name: string): string[] {
  const names = [name]
  const queue = [name]
  const assigns = nodes.filter(
    (node) => node.type === 'Set' && node.value && (node.assignee as Node)?.type === 'Identifier',
  )
  for (let current = queue.shift(); current !== undefined; current = queue.shift()) {
    for (const assign of assigns) {
      if (!reads(assign.value as Node, current)) continue
      const target = (assign.assignee as Node).value as string
      names.push(target)
      if (target !== current) queue.push(target)
    }
  }
  return names
}

function loopNames(loop: Node): string[] {
  const target = loop.loopvar as Node
  return target.type === 'Identifier' ? [target.value as string] : []
}

/**
 * vLLM's `_is_var_or_elems_access`: the node reads `name` (or `name`'s `key`), through
 * filters, tests, slices and a loop's inline `if`.
 */
function reads(node: Node | undefined, name: string, key?: string): boolean {
  if (node === undefined || node === null) return false
  switch (node.type) {
    case 'FilterExpression':
      return reads(node.operand as Node, name, key)
    case 'TestExpression':
      return reads(node.operand as Node, name, key)
    case 'SelectExpression':
      return reads(node.lhs as Node, name, key)
    case 'MemberExpression': {
      const property = node.property as Node
      if (property.type === 'SliceExpression') return reads(node.object as Node, name, key)
      if (key === undefined) return false
      const object = node.object as Node
      const named = object.type === 'Identifier' && object.value === name
      const keyed = node.computed
        ? property.type === 'StringLiteral' && property.value === key
        : property.type === 'Identifier' && property.value === key
      return named && keyed
    }
    case 'Identifier':
      return key === undefined && node.value === name
    default:
      return false
  }
}

function allNodes(root: unknown): Node[] {
  const out: Node[] = []
  const visit = (value: unknown) => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item)
      return
    }
    if (typeof value !== 'object' || value === null) return
    const node = value as Node
    if (typeof node.type === 'string') out.push(node)
    for (const [key, child] of Object.entries(node)) {
      if (key !== 'type' && typeof child === 'object') visit(child)
    }
  }
  visit(root)
  return out
}
