import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import { isTokenizerPath } from '../../shared/crd/builtin-tokenizers.ts'
import { loadTokenizer } from './load-tokenizer.ts'

export interface TokenizerSourceProblem {
  /** An error: the files are there and wrong. A warning: they cannot be read from here. */
  severity: 'error' | 'warning'
  message: string
}

/** Errors of stat that mean "not on this machine", not "there and wrong". */
const absentHere = new Set(['ENOENT', 'ENOTDIR', 'EACCES', 'EPERM', 'ELOOP'])

/** A chat every template renders: what the scorer does with a pool's first chat request. */
const probeChat = [{ role: 'user', content: 'Hello' }]

/**
 * What can be told of a pool's tokenizer path from where kinfctl runs. When the path is
 * not on this machine (usually a volume the chart mounts into the scorer's pod), a warning
 * says it was not checked: validating offline must not fail for it. When it is here, it is
 * loaded as the scorer loads it (loadTokenizer: tokenizer.json, tokenizer_config.json, a
 * cache snapshot or repository resolved) and a one-message chat is rendered with its chat
 * template (tokenizer_config.json's chat_template or chat_template.jinja); a failure is an
 * error naming the file and the reason. Built-in names (and names that are not, which the
 * schema refuses with the list of built-ins) are not this function's business: it returns
 * none.
 */
export function checkTokenizerSource(source: string): TokenizerSourceProblem[] {
  if (!isTokenizerPath(source)) return []
  try {
    statSync(resolve(source))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable'
    if (!absentHere.has(code))
      return [{ severity: 'error', message: `tokenizer ${source}: ${code}` }]
    return [
      {
        severity: 'warning',
        message: `tokenizer ${source} is not checked: it cannot be read here (${code}); the scorer loads it where it runs, usually from a volume mounted into its pod`,
      },
    ]
  }
  const loaded = loadTokenizer(source)
  if (!loaded.ok) return [{ severity: 'error', message: loaded.error.message }]
  try {
    loaded.tokenizer.applyChatTemplate(probeChat)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return [
      {
        severity: 'error',
        message: `tokenizer ${source}: its chat template cannot render a chat, so the scorer would refuse every chat request: ${reason}`,
      },
    ]
  }
  return []
}
