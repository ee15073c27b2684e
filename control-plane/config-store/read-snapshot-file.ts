import { readFile, stat } from 'node:fs/promises'
import { verifySnapshot } from '../../shared/config/compile-snapshot.ts'
import { snapshotSchemaOf } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { builtinPlugins, type Plugins } from '../../shared/plugins.ts'
import { messageOf } from './create-follow-state.ts'
import type { PublishedSnapshot } from './published-snapshot.ts'

/**
 * A snapshot file from `kinfctl compile`, read once and verified, as version 0 (its mtime
 * as publishedAt); a KinfError saying why when it will not do. Read with the plugins'
 * schema, the built-in one's by default.
 */
export async function readSnapshotFile(
  path: string,
  plugins: Plugins = builtinPlugins,
): Promise<PublishedSnapshot> {
  let text: string
  let publishedAt: number
  try {
    text = await readFile(path, 'utf8')
    publishedAt = Math.trunc((await stat(path)).mtimeMs)
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : error
    throw new KinfError('invalid_config', `config ${path}: ${messageOf(reason)}`, { cause: error })
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new KinfError('invalid_config', `config ${path}: not JSON (kinfctl compile writes it)`)
  }
  const snapshot = await verifySnapshot(json, snapshotSchemaOf(plugins)).catch((error: unknown) => {
    throw new KinfError('invalid_config', `config ${path}: ${messageOf(error)}`, { cause: error })
  })
  return { version: 0, hash: snapshot.hash, publishedAt, snapshot }
}
