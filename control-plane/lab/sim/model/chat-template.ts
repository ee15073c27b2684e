import { Environment, parse, tokenize } from '@huggingface/jinja'
import { type ContentFormat, detectContentFormat } from './detect-content-format.ts'
import { type JinjaValue, toJinja } from './jinja-values.ts'
import { PythonInterpreter, TemplateRenderError } from './python-interpreter.ts'
import { fromJavaScript, isPyDict, type PyDict, type PyValue, pyStrip } from './python-json.ts'

/** A chat template parsed once, with what vLLM reads from its syntax tree. */
export interface ChatTemplate {
  readonly source: string
  readonly program: unknown
  /** vLLM's detected content format. */
  readonly contentFormat: ContentFormat
  /** Every name the template reads: vLLM passes only those of chat_template_kwargs. */
  readonly names: ReadonlySet<string>
}

/**
 * Parses a template as transformers compiles it (trim_blocks and lstrip_blocks on, one
 * trailing newline dropped). Throws a TemplateRenderError for a template jinja cannot parse.
 */
export function compileChatTemplate(source: string): ChatTemplate {
  let program: unknown
  try {
    program = parse(tokenize(source, { lstrip_blocks: true, trim_blocks: true }))
  } catch (error) {
    throw new TemplateRenderError('TemplateSyntaxError', (error as Error).message)
  }
  return { source, program, contentFormat: detectContentFormat(program), names: namesOf(program) }
}

export interface TemplateInput {
  /** The conversation as vLLM hands it over: a list of message dicts. */
  messages: PyValue[]
  tools: PyValue[] | null
  documents: PyValue | null
  addGenerationPrompt: boolean
  continueFinalMessage: boolean
  /** Further template variables: the special tokens, then chat_template_kwargs. */
  variables: PyDict
  /** What strftime_now reads. */
  now: () => Date
}

const continueTag = 'CONTINUE_FINAL_MESSAGE_TAG '

/**
 * transformers' render_jinja_template: the conversation, tools, documents and
 * add_generation_prompt beside the other variables; with continue_final_message a tag is
 * appended to the final message's text (its last text part) and the text cut where the
 * tag ends up, so the prompt stops inside that message. Throws TemplateRenderError.
 */
export function renderChatTemplate(template: ChatTemplate, input: TemplateInput): string {
  const messages = input.continueFinalMessage ? markFinalMessage(input.messages) : null
  const environment = new Environment()
  const globals: Record<string, JinjaValue> = {
    true: toJinja(true),
    false: toJinja(false),
    none: toJinja(null),
    True: toJinja(true),
    False: toJinja(false),
    None: toJinja(null),
  }
  for (const [name, value] of Object.entries(globals)) environment.setVariable(name, value as never)
  environment.set('raise_exception', (message: unknown) => {
    throw new TemplateRenderError('TemplateError', String(message))
  })
  environment.set('strftime_now', (format: unknown) => strftime(input.now(), String(format)))
  environment.set('range', pythonRange)
  for (const [name, value] of input.variables)
    environment.setVariable(name, toJinja(value) as never)
  const variables: [string, PyValue][] = [
    ['messages', messages?.conversation ?? input.messages],
    ['tools', input.tools],
    ['documents', input.documents],
    ['add_generation_prompt', input.addGenerationPrompt],
  ]
  for (const [name, value] of variables) environment.setVariable(name, toJinja(value) as never)
  let rendered: string
  try {
    rendered = new PythonInterpreter(environment).run(template.program).value as string
  } catch (error) {
    if (error instanceof TemplateRenderError) throw error
    throw new TemplateRenderError('TemplateError', (error as Error).message)
  }
  return messages === null ? rendered : cutAtTag(rendered, messages.finalText)
}

function markFinalMessage(conversation: PyValue[]): { conversation: PyValue[]; finalText: string } {
  const last = conversation.at(-1)
  const final: PyDict = isPyDict(last) ? new Map(last) : new Map()
  const copy = [...conversation.slice(0, -1), final]
  const content = final.get('content')
  if (content === undefined || content === null)
    throw new TemplateRenderError(
      'ValueError',
      'continue_final_message is set but the final message has no "content" to continue!',
    )
  if (!Array.isArray(content)) {
    final.set('content', `${String(content)}${continueTag}`)
    return { conversation: copy, finalText: String(content) }
  }
  // The last part with a text (transformers' content_block loop, in reverse).
  for (let i = content.length - 1; i >= 0; i--) {
    const part = content[i]
    if (!isPyDict(part) || !part.has('text')) continue
    const text = String(part.get('text'))
    const parts = [...content]
    parts[i] = new Map(part).set('text', `${text}${continueTag}`)
    final.set('content', parts)
    return { conversation: copy, finalText: text }
  }
  throw new TemplateRenderError(
    'ValueError',
    'continue_final_message is set but we could not find any text to continue in the final message!',
  )
}

function cutAtTag(rendered: string, finalText: string): string {
  const tag = continueTag.trim()
  if (!rendered.includes(pyStrip(finalText, null)) || !rendered.includes(tag))
    throw new TemplateRenderError(
      'ValueError',
      'continue_final_message is set but the final message does not appear in the chat after applying the chat template! This can happen if the chat template deletes portions of the final message. Please verify the chat template and final message in your chat to ensure they are compatible.',
    )
  const at = rendered.lastIndexOf(tag)
  // Where the template kept the tag's trailing space, the text ends exactly there; where it
  // stripped the message, it ends at the message's last non-space character.
  return rendered.startsWith(continueTag, at)
    ? rendered.slice(0, at)
    : pyStrip(rendered.slice(0, at), null, 'right')
}

function namesOf(program: unknown): Set<string> {
  const names = new Set<string>()
  const visit = (value: unknown) => {
    if (Array.isArray(value)) for (const item of value) visit(item)
    else if (typeof value === 'object' && value !== null) {
      const node = value as { type?: unknown; value?: unknown }
      if (node.type === 'Identifier' && typeof node.value === 'string') names.add(node.value)
      for (const child of Object.values(node)) if (typeof child === 'object') visit(child)
    }
  }
  visit(program)
  return names
}

function pythonRange(start: number, stop?: number, step = 1): number[] {
  const [from, to] = stop === undefined ? [0, start] : [start, stop]
  const out: number[] = []
  for (let i = from; step > 0 ? i < to : i > to; i += step) out.push(i)
  return out
}

const months = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
]
const days = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']

/** Python's strftime for the directives chat templates use, on the clock's UTC reading. */
export function strftime(date: Date, format: string): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0')
  const hour12 = date.getUTCHours() % 12 === 0 ? 12 : date.getUTCHours() % 12
  const directives: Record<string, string> = {
    Y: String(date.getUTCFullYear()),
    y: pad(date.getUTCFullYear() % 100),
    m: pad(date.getUTCMonth() + 1),
    d: pad(date.getUTCDate()),
    e: String(date.getUTCDate()).padStart(2, ' '),
    B: months[date.getUTCMonth()] as string,
    b: (months[date.getUTCMonth()] as string).slice(0, 3),
    A: days[date.getUTCDay()] as string,
    a: (days[date.getUTCDay()] as string).slice(0, 3),
    H: pad(date.getUTCHours()),
    I: pad(hour12),
    M: pad(date.getUTCMinutes()),
    S: pad(date.getUTCSeconds()),
    p: date.getUTCHours() < 12 ? 'AM' : 'PM',
    j: pad(
      Math.floor((date.getTime() - Date.UTC(date.getUTCFullYear(), 0, 1)) / 86_400_000) + 1,
      3,
    ),
    '%': '%',
  }
  return format.replace(/%(.)/g, (whole, code: string) => directives[code] ?? whole)
}

/** Special tokens and other plain values as template variables. */
export function variablesOf(values: Readonly<Record<string, unknown>>): PyDict {
  return new Map(Object.entries(values).map(([k, v]) => [k, fromJavaScript(v)]))
}
