import { readFile } from 'node:fs/promises'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { type OpenAiRequest, parseOpenAiRequest } from '../../../shared/openai/openai-request.ts'
import { findTenant } from '../../../shared/policy/find-tenant.ts'
import { createCacheSalter } from '../../../shared/tenancy/cache-salt.ts'
import { tenantCacheSalt } from '../../../workers/app/upstream-body.ts'
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

/**
 * The request as the edge sends it for `tenant`: an Isolated tenant's cache_salt derived
 * from the edge's signing secret, as the pods and the index key its blocks. A Shared
 * tenant's request is left as it is.
 */
export async function asTenantSends(
  request: OpenAiRequest,
  snapshot: ConfigSnapshot,
  tenant: string,
  signingSecret: string | undefined,
): Promise<OpenAiRequest> {
  const found = findTenant(snapshot, tenant)
  if (found === null) throw new KinfError('not_found', `unknown tenant "${tenant}"`)
  if (found.tenant.prefixCache.sharing === 'Shared') return request
  if (!signingSecret)
    throw new UsageError(
      `tenant ${tenant}'s prefix cache is Isolated: set KINFERENCE_SIGNING_SECRET (the edge's) so its cache_salt can be derived (npm start prints the whole command)`,
    )
  const cacheSalter = createCacheSalter(signingSecret)
  const salt = await tenantCacheSalt({ cacheSalter }, snapshot, { tenant, body: request.body })
  return { ...request, body: { ...request.body, cache_salt: salt } } as OpenAiRequest
}
