import type { ContentFormat } from './parse-chat-messages.ts'

type Node = { type?: unknown; [key: string]: unknown }

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null

/** Every node of a parsed template whose type is `type`, depth first. */
function findAll(root: unknown, type: string): Node[] {
  const found: Node[] = []
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item)
      return
    }
    if (!isNode(value)) return
    if (value.type === type) found.push(value)
    for (const child of Object.values(value)) visit(child)
  }
  visit(root)
  return found
}

const isName = (node: unknown, name: string) =>
  isNode(node) && node.type === 'Identifier' && node.value === name

/** `name[key]` or `name.key`. */
function isKeyOf(node: unknown, name: string, key: string): boolean {
  if (!isNode(node) || node.type !== 'MemberExpression' || !isName(node.object, name)) return false
  const property = node.property
  if (!isNode(property)) return false
  return node.computed
    ? property.type === 'StringLiteral' && property.value === key
    : property.type === 'Identifier' && property.value === key
}

/** The variable (or one of its keys), through filters, tests and slices, as vLLM matches it. */
function reads(node: unknown, name: string, key?: string): boolean {
  if (!isNode(node)) return false
  if (node.type === 'FilterExpression' || node.type === 'TestExpression')
    return reads(node.operand, name, key)
  if (node.type === 'SelectExpression') return reads(node.lhs, name, key)
  if (
    node.type === 'MemberExpression' &&
    node.computed === true &&
    isNode(node.property) &&
    node.property.type === 'SliceExpression'
  )
    return reads(node.object, name, key)
  return key === undefined ? isName(node, name) : isKeyOf(node, name, key)
}

/** "messages" and every variable set from it (`{% set loop_messages = messages[1:] %}`). */
function messagesNames(root: unknown): string[] {
  const names = ['messages']
  const sets = findAll(root, 'Set')
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string
    for (const set of sets) {
      const target = set.assignee
      if (!isNode(target) || target.type !== 'Identifier' || !reads(set.value, name)) continue
      if (!names.includes(target.value as string)) names.push(target.value as string)
    }
  }
  return names
}

/**
 * vLLM's content-format detection (vllm/renderers/hf.py, `_detect_content_format`): a
 * template that loops over a message's content (`{% for part in message['content'] %}`,
 * the message being a loop variable over `messages` or a variable set from it) reads
 * OpenAI's list of parts ("openai"); any other reads a string ("string").
 */
export function detectContentFormat(parsed: unknown): ContentFormat {
  const loops = findAll(parsed, 'For')
  const names = messagesNames(parsed)
  const messageVars = loops.flatMap((loop) =>
    isNode(loop.loopvar) &&
    loop.loopvar.type === 'Identifier' &&
    names.some((name) => reads(loop.iterable, name))
      ? [loop.loopvar.value as string]
      : [],
  )
  const loopsOverContent = loops.some((loop) =>
    messageVars.some((name) => reads(loop.iterable, name, 'content')),
  )
  return loopsOverContent ? 'openai' : 'string'
}
