import { readFile } from 'node:fs/promises'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { type OpenAiRequest, parseOpenAiRequest } from '../../../shared/openai/openai-request.ts'
import { UsageError } from '../cli-io.ts'

/**
 * The request `inspect prefix` scores: a completion of --prompt-file's text, or a chat of
 * --messages-file's messages (a JSON array, or an object with `messages`, as a request body).
 */
export async function readPromptRequest(
  model: string,
  files: { 'prompt-file'?: string | undefined; 'messages-file'?: string | undefined },
): Promise<OpenAiRequest> {
  const promptFile = files['prompt-file']
  const messagesFile = files['messages-file']
  if ((promptFile === undefined) === (messagesFile === undefined))
    throw new UsageError('give exactly one of --prompt-file F and --messages-file F')
  if (promptFile !== undefined)
    return parsed('completion', { model, prompt: await read(promptFile) }, promptFile)
  const path = messagesFile as string
  let json: unknown
  try {
    json = JSON.parse(await read(path))
  } catch (error) {
    if (KinfError.isInstance(error)) throw error
    throw new KinfError('invalid_request', `${path}: not JSON`)
  }
  const messages = Array.isArray(json) ? json : (json as { messages?: unknown } | null)?.messages
  return parsed('chat', { model, messages }, path)
}

async function read(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : (error as Error).message
    throw new KinfError('invalid_request', `cannot read ${path}: ${reason}`, { cause: error })
  }
}

function parsed(kind: 'chat' | 'completion', body: unknown, path: string): OpenAiRequest {
  const result = parseOpenAiRequest(kind, body)
  if ('issues' in result)
    throw new KinfError('invalid_request', `${path}: ${result.issues.message}`)
  return result.request
}
