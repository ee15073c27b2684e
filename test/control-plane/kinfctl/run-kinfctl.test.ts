import { describe, expect, it, vi } from 'vitest'
import { KinfError, KinfErrorCode } from '../../../shared/errors/kinf-error.ts'
import { runCli } from '../../support/run-cli.ts'

// No command fails with most codes today (they come from servers), so `sim` is replaced by
// a stand-in that throws what a test sets: the mapping is then checked where the CLI applies
// it. The other commands stay real.
const failure = vi.hoisted(() => ({ error: undefined as unknown }))
vi.mock('../../../control-plane/lab/commands/sim.ts', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  simCommand: async () => {
    throw failure.error
  },
}))

/** The exit statuses kinfctl promises (its --help), one per kind of failure. */
const expectedExit: Record<KinfErrorCode, number> = {
  invalid_request: 1,
  invalid_config: 1,
  payload_too_large: 1,
  not_found: 3,
  unauthorized: 4,
  forbidden: 4,
  upstream_unavailable: 5,
  saturated: 5,
  rate_limited: 5,
  locality_violation: 5,
  upstream_error: 6,
  internal: 7,
}

async function simFailingWith(error: unknown) {
  failure.error = error
  return runCli(['sim'])
}

/** The error codes --help lists under each exit status. */
function documentedExits(help: string): Map<string, number> {
  const documented = new Map<string, number>()
  let status: number | undefined
  for (const line of help.slice(help.indexOf('Exit status')).split('\n')) {
    const heading = /^ {2}(\d+) {2}\S/.exec(line)
    if (heading) status = Number(heading[1])
    else if (/^ {7}\S/.test(line) && status !== undefined) {
      for (const code of line.trim().split(', ')) documented.set(code, status)
    }
  }
  return documented
}

describe('kinfctl exit status', () => {
  it.each(KinfErrorCode.options)('follows a KinfError %s', async (code) => {
    const { code: exit, stderr } = await simFailingWith(new KinfError(code, 'it failed'))
    expect(exit).toBe(expectedExit[code])
    expect(stderr).toBe('kinfctl sim: it failed\n')
  })

  it('is 1 for an error without a code, as before', async () => {
    const { code, stderr } = await simFailingWith(new Error('something broke'))
    expect(code).toBe(1)
    expect(stderr).toBe('kinfctl sim: something broke\n')
  })

  it('is 2 for a usage mistake, with the usage text', async () => {
    const { code, stderr } = await runCli(['explain', '--output', 'yaml'])
    expect(code).toBe(2)
    expect(stderr).toMatch(/text or json[\s\S]*Usage: kinfctl explain/)
  })

  describe('of a real command', () => {
    const explain = (snapshot: string, stdin = '') =>
      runCli(['explain', '--snapshot', snapshot, '--tenant', 't', '--prompt-file', 'p'], stdin)

    it('is 1 for a snapshot that is not JSON (invalid_config)', async () => {
      const { code, stderr } = await explain('-', 'not json')
      expect(stderr).toMatch(/^kinfctl explain: snapshot - is not JSON/)
      expect(code).toBe(1)
    })

    it('is 1 for JSON that is no snapshot (invalid_config)', async () => {
      const { code, stderr } = await explain('-', '{}')
      expect(stderr).toMatch(/^kinfctl explain: snapshot -: not a config snapshot/)
      expect(code).toBe(1)
    })

    it('is 1 for a snapshot file that cannot be read (invalid_request)', async () => {
      const { code, stderr } = await explain('/nonexistent/snapshot.json')
      expect(stderr).toMatch(/^kinfctl explain: cannot read snapshot/)
      expect(code).toBe(1)
    })
  })

  it('is documented in --help, each code under the status it gives', async () => {
    const { code, stdout } = await runCli(['--help'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/^ {2}0 {2}success$/m)
    expect(stdout).toMatch(/^ {2}2 {2}usage/m)
    expect(Object.fromEntries(documentedExits(stdout))).toEqual(expectedExit)
  })

  it('is 2 for an unknown command, also one named like an object property', async () => {
    for (const name of ['frobnicate', 'toString', '__proto__', 'constructor']) {
      const { code, stderr } = await runCli([name])
      expect(stderr).toMatch(new RegExp(`^kinfctl: unknown command "${name}"`))
      expect(code).toBe(2)
    }
  })

  it('lists every command in --help and shows a command usage on demand', async () => {
    const { stdout } = await runCli(['--help'])
    for (const name of [
      'validate',
      'compile',
      'controller',
      'scorer',
      'edge',
      'sim',
      'up',
      'bench',
      'anatomy',
    ])
      expect(stdout).toMatch(new RegExp(`^ {2}${name} +\\S`, 'm'))
    const help = await runCli(['controller', '--help'])
    expect(help.stdout).toMatch(/^Usage: kinfctl controller/)
  })
})
