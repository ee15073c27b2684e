import { execFile, execFileSync } from 'node:child_process'
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { gitCommit } from '../../../control-plane/kinfctl/commands/version.ts'
import { runCli } from '../../support/run-cli.ts'

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }
const headNow = () => execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim()
/** Runs kinfctl with HEAD read before and after: others may commit to this clone meanwhile. */
async function withHead(argv: string[]) {
  const before = headNow()
  const result = await runCli(argv)
  const after = headNow()
  const head = [before, after].find((commit) => result.stdout.includes(commit)) ?? before
  return { ...result, head }
}
const temporary: string[] = []
afterAll(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true })
})
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'kinfctl-version-'))
  temporary.push(dir)
  return dir
}

describe('kinfctl version', () => {
  it('prints the package version, the commit of this clone and Node’s version', async () => {
    const { code, stdout, stderr, head } = await withHead(['version'])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout).toBe(`kinfctl ${version}, commit ${head}, Node.js ${process.version}\n`)
  })

  it('--version is the same; -o json and -o yaml give the fields', async () => {
    const long = await withHead(['--version'])
    expect(long.stdout).toBe(
      `kinfctl ${version}, commit ${long.head}, Node.js ${process.version}\n`,
    )
    const json = await withHead(['version', '-o', 'json'])
    expect(JSON.parse(json.stdout)).toEqual({ version, commit: json.head, node: process.version })
    const yaml = await withHead(['version', '--output', 'yaml'])
    expect(yaml.stdout).toBe(
      `version: ${version}\ncommit: ${yaml.head}\nnode: ${process.version}\n`,
    )
    const bad = await runCli(['version', '-o', 'xml'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--output must be text, json or yaml, not "xml"')
  })

  it('is listed in kinfctl --help', async () => {
    const { stdout } = await runCli(['--help'])
    expect(stdout).toMatch(/^ {2}version +print the version/m)
    expect(stdout).toContain('kinfctl --version for the version')
  })

  it('works from the image’s files: package.json at the root, no .git', async () => {
    // The files `kinfctl --version` loads, laid out as the Dockerfile copies them to /app.
    const root = tempDir()
    cpSync('package.json', join(root, 'package.json'))
    cpSync('shared', join(root, 'shared'), { recursive: true })
    cpSync('control-plane/kinfctl', join(root, 'control-plane/kinfctl'), { recursive: true })
    symlinkSync(resolve('node_modules'), join(root, 'node_modules'), 'dir')
    const launcher = join(root, 'control-plane/kinfctl/kinfctl.js')
    const { stdout } = await promisify(execFile)(process.execPath, [launcher, '--version'], {
      cwd: root,
    })
    expect(stdout).toBe(`kinfctl ${version}, Node.js ${process.version}\n`)
  })
})

describe('gitCommit', () => {
  const sha = 'a'.repeat(40)
  const other = 'b'.repeat(40)

  it('reads a detached HEAD, a loose ref and a packed one', async () => {
    const detached = join(tempDir(), '.git')
    mkdirSync(detached)
    writeFileSync(join(detached, 'HEAD'), `${sha}\n`)
    expect(await gitCommit(detached)).toBe(sha)

    const loose = join(tempDir(), '.git')
    mkdirSync(join(loose, 'refs/heads'), { recursive: true })
    writeFileSync(join(loose, 'HEAD'), 'ref: refs/heads/main\n')
    writeFileSync(join(loose, 'refs/heads/main'), `${sha}\n`)
    writeFileSync(join(loose, 'packed-refs'), `${other} refs/heads/main\n`)
    expect(await gitCommit(loose)).toBe(sha)

    const packed = join(tempDir(), '.git')
    mkdirSync(packed)
    writeFileSync(join(packed, 'HEAD'), 'ref: refs/heads/main\n')
    writeFileSync(
      join(packed, 'packed-refs'),
      `# pack-refs with: peeled\n${other} refs/heads/main\n`,
    )
    expect(await gitCommit(packed)).toBe(other)
  })

  it('follows a worktree’s .git file to its folder and the shared refs', async () => {
    const main = join(tempDir(), '.git')
    const worktree = join(main, 'worktrees/w')
    mkdirSync(join(main, 'refs/heads'), { recursive: true })
    mkdirSync(worktree, { recursive: true })
    writeFileSync(join(main, 'refs/heads/topic'), `${other}\n`)
    writeFileSync(join(worktree, 'HEAD'), 'ref: refs/heads/topic\n')
    writeFileSync(join(worktree, 'commondir'), `${relative(worktree, main)}\n`)
    const checkout = tempDir()
    writeFileSync(join(checkout, '.git'), `gitdir: ${worktree}\n`)
    expect(await gitCommit(join(checkout, '.git'))).toBe(other)
  })

  it('is null without a repository, or with an unborn branch', async () => {
    expect(await gitCommit(join(tempDir(), '.git'))).toBeNull()
    const unborn = join(tempDir(), '.git')
    mkdirSync(unborn)
    writeFileSync(join(unborn, 'HEAD'), 'ref: refs/heads/main\n')
    expect(await gitCommit(unborn)).toBeNull()
  })
})
