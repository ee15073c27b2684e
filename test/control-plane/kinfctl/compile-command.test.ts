import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { verifySnapshot } from '../../../shared/config/compile-snapshot.ts'
import { brokenDir, examplesDir, readYamlFolder } from '../../support/read-yaml-documents.ts'
import { runCli } from '../../support/run-cli.ts'

const platform = join(examplesDir, 'platform.yaml')
const policyExamples = readYamlFolder(examplesDir)
  .map(({ file }) => file)
  .filter((file) => file !== platform)

describe('kinfctl compile', () => {
  it.each(policyExamples)(
    'compiles %s with the platform into a verifiable snapshot',
    async (example) => {
      const out = join(mkdtempSync(join(tmpdir(), 'kinfctl-')), 'nested', 'snapshot.json')
      const { code, stderr } = await runCli(['compile', platform, example, '--out', out])
      expect(stderr).toMatch(/^compiled 2 pools, .* into .*: sha256:[a-f0-9]{64}\n$/)
      expect(code).toBe(0)
      const snapshot = await verifySnapshot(JSON.parse(readFileSync(out, 'utf8')))
      expect(Object.keys(snapshot.policies)).toHaveLength(1)
      for (const tenant of Object.values(snapshot.policies)[0]?.spec.tenants ?? []) {
        expect(snapshot.tenants[tenant.name]).toBe(Object.keys(snapshot.policies)[0])
      }
    },
  )

  it('gives the same bytes and hash whatever the order of the inputs', async () => {
    const forward = await runCli(['compile', platform, ...policyExamples])
    const backward = await runCli(['compile', ...[...policyExamples].reverse(), platform])
    expect(forward.code).toBe(0)
    expect(backward.stdout).toBe(forward.stdout)
  })

  it('fills in defaults and derives locality', async () => {
    const { stdout } = await runCli(['compile', examplesDir])
    const snapshot = await verifySnapshot(JSON.parse(stdout))
    const pool = snapshot.pools['kinference/qwen-8b']
    expect(pool?.spec.scheduler.maxNumBatchedTokens).toBe(2048)
    expect(pool?.spec.metrics.path).toBe('/metrics')
    expect(snapshot.backends['kinference/bedrock-claude']?.locality).toBe('External')
    expect(snapshot.backends['kinference/qwen-27b-support']?.locality).toBe('InCluster')
  })

  it('refuses invalid input with exit 1 and writes nothing', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'kinfctl-')), 'snapshot.json')
    const { code, stderr } = await runCli(['compile', brokenDir, '--out', out])
    expect(code).toBe(1)
    expect(stderr).toMatch(/dangling-references\.yaml:\d+:\d+: .*not found/)
    expect(existsSync(out)).toBe(false)
  })

  it('-o is the format, as everywhere: -o json prints the snapshot, -o FILE is refused', async () => {
    const json = await runCli(['compile', examplesDir, '-o', 'json'])
    expect(json.code).toBe(0)
    expect(json.stdout).toBe((await runCli(['compile', examplesDir])).stdout)
    const dir = mkdtempSync(join(tmpdir(), 'kinfctl-'))
    const out = join(dir, 'snapshot.json')
    // Once this wrote the snapshot to a file of that name (and "-o json" to a file "json").
    const old = await runCli(['compile', examplesDir, '-o', out])
    expect(old.code).toBe(2)
    expect(old.stderr).toContain(
      `kinfctl compile: -o/--output is the output format (json), not a file: to write the snapshot to ${out}, use --out ${out}`,
    )
    expect(old.stdout).toBe('')
    expect(existsSync(out)).toBe(false)
    const dash = await runCli(['compile', examplesDir, '--output', '-'])
    expect(dash.code).toBe(2)
    expect(dash.stderr).toContain('to write the snapshot to standard output, leave it out')
  })

  it('--out - writes to standard output', async () => {
    const { code, stdout, stderr } = await runCli(['compile', examplesDir, '--out', '-'])
    expect(code).toBe(0)
    expect(stdout).toBe((await runCli(['compile', examplesDir])).stdout)
    expect(stderr).toMatch(/ into standard output: sha256:/)
  })

  it('refuses input without Kinference resources', async () => {
    const { code, stderr } = await runCli(
      ['compile', '-'],
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n',
    )
    expect(code).toBe(1)
    expect(stderr).toMatch(/no Kinference resources/)
  })
})

describe('verifySnapshot', () => {
  it('rejects a snapshot whose content no longer matches its hash', async () => {
    const { stdout } = await runCli(['compile', examplesDir])
    const snapshot = JSON.parse(stdout)
    snapshot.tenants['free-tier'] = 'kinference/burst-to-bedrock'
    await expect(verifySnapshot(snapshot)).rejects.toThrow(/does not match its content/)
    await expect(verifySnapshot({ kind: 'something-else' })).rejects.toThrow(
      /not a config snapshot/,
    )
  })
})
