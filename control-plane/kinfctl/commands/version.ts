import { readFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { stringify } from 'yaml'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { type CliIo, exitCode, UsageError } from '../cli-io.ts'

export const versionUsage = `Usage: kinfctl version [options]

Prints (as kinfctl's own option --version does) kinfctl's version (the version of the package.json it runs from, which the image
copies to /app, and the image's tag), the git commit when kinfctl runs from a clone of
the repository (the image holds no .git: its commit is the image's other tag and its
org.opencontainers.image.revision label), and the Node.js version.

Options:
  -o, --output text|json|yaml   output format (default text)
`

/** What `kinfctl version` reports. */
export interface KinfctlVersion {
  version: string
  /** The checked-out commit, when kinfctl runs from a git clone; else null. */
  commit: string | null
  node: string
}

/** The package.json kinfctl runs from: the repository's, or /app's in the image. */
const packageJson = new URL('../../../package.json', import.meta.url)

export async function versionCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { output: { type: 'string', short: 'o', default: 'text' } },
  })
  const format = values.output
  if (format !== 'text' && format !== 'json' && format !== 'yaml')
    throw new UsageError(`--output must be text, json or yaml, not "${format}"`)
  const version = await readKinfctlVersion()
  if (format === 'json') io.stdout(`${JSON.stringify(version, null, 2)}\n`)
  else if (format === 'yaml') io.stdout(stringify(version))
  else io.stdout(formatVersion(version))
  return exitCode.ok
}

export function formatVersion(version: KinfctlVersion): string {
  const commit = version.commit === null ? '' : `, commit ${version.commit}`
  return `kinfctl ${version.version}${commit}, Node.js ${version.node}\n`
}

export async function readKinfctlVersion(): Promise<KinfctlVersion> {
  let version: unknown
  try {
    version = (JSON.parse(await readFile(packageJson, 'utf8')) as { version?: unknown }).version
  } catch (error) {
    throw new KinfError(
      'internal',
      `cannot read ${fileURLToPath(packageJson)}: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
  if (typeof version !== 'string') throw new KinfError('internal', 'package.json has no version')
  const root = dirname(fileURLToPath(packageJson))
  return { version, commit: await gitCommit(join(root, '.git')), node: process.version }
}

/**
 * The commit HEAD names, read from the files git keeps (HEAD, a loose ref or packed-refs)
 * rather than by running git, which the image does not have; a worktree's `.git` file
 * points to its own folder. Null wherever that is not found.
 */
export async function gitCommit(dotGit: string): Promise<string | null> {
  const read = (path: string) =>
    readFile(path, 'utf8').then(
      (text) => text.trim(),
      () => null,
    )
  let gitDir = dotGit
  const pointer = await read(dotGit)
  if (pointer?.startsWith('gitdir:')) gitDir = resolve(dirname(dotGit), pointer.slice(7).trim())
  const head = await read(join(gitDir, 'HEAD'))
  if (head === null) return null
  if (isCommit(head)) return head
  const ref = /^ref:\s*(\S+)$/.exec(head)?.[1]
  if (ref === undefined) return null
  // A worktree keeps HEAD in its folder and the refs in the main repository's (commondir).
  const common = await read(join(gitDir, 'commondir'))
  const refsDir = common === null ? gitDir : resolve(gitDir, common)
  for (const dir of new Set([gitDir, refsDir])) {
    const loose = await read(join(dir, ref))
    if (loose !== null && isCommit(loose)) return loose
  }
  const packed = (await read(join(refsDir, 'packed-refs'))) ?? ''
  for (const line of packed.split('\n')) {
    const [sha, name] = line.trim().split(' ')
    if (name === ref && sha !== undefined && isCommit(sha)) return sha
  }
  return null
}

const isCommit = (text: string) => /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(text)
