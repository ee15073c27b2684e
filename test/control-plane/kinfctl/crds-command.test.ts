import { appendFileSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { crdFolders } from '../../../control-plane/kinfctl/commands/crds.ts'
import { chartDir } from '../../support/helm-chart.ts'
import { runCli } from '../../support/run-cli.ts'

describe('kinfctl crds', () => {
  it('infra/k8s/crds and the chart’s crds/ are in sync with the zod schemas', async () => {
    expect(crdFolders).toEqual(['infra/k8s/crds', join(chartDir, 'crds')])
    const { code, stderr } = await runCli(['crds', '--check'])
    expect(stderr).toBe('')
    expect(code).toBe(0)
  })

  it('writes and checks every folder it is given', async () => {
    const [first, second] = [
      mkdtempSync(join(tmpdir(), 'crds-')),
      mkdtempSync(join(tmpdir(), 'crds-')),
    ]
    const written = await runCli(['crds', '--out', first, '--out', second])
    expect(written.code).toBe(0)
    expect(written.stderr).toBe(
      `5 CRDs in ${first}: 5 written, 0 removed\n5 CRDs in ${second}: 5 written, 0 removed\n`,
    )
    appendFileSync(join(second, 'kinference.dev_inferencepools.yaml'), '# edited\n')
    const stale = await runCli(['crds', '--out', first, '--out', second, '--check'])
    expect(stale.code).toBe(1)
    expect(stale.stderr).toBe(
      `${join(second, 'kinference.dev_inferencepools.yaml')}: out of date; run kinfctl crds\n`,
    )
  })

  it('writes one CRD per kind, and --check notices edits and strays', async () => {
    const out = mkdtempSync(join(tmpdir(), 'crds-'))
    expect((await runCli(['crds', '--out', out])).code).toBe(0)
    expect(readdirSync(out).sort()).toEqual([
      'kinference.dev_gatewaybackends.yaml',
      'kinference.dev_inferencepolicies.yaml',
      'kinference.dev_inferencepools.yaml',
      'kinference.dev_inferenceproviders.yaml',
      'kinference.dev_inferenceworkersets.yaml',
    ])
    expect((await runCli(['crds', '--out', out, '--check'])).code).toBe(0)
    appendFileSync(join(out, 'kinference.dev_inferencepools.yaml'), '# edited\n')
    writeFileSync(join(out, 'kinference.dev_oldkinds.yaml'), 'x: 1\n')
    const stale = await runCli(['crds', '--out', out, '--check'])
    expect(stale.code).toBe(1)
    expect(stale.stderr).toMatch(/inferencepools\.yaml: out of date/)
    expect(stale.stderr).toMatch(/oldkinds\.yaml: no such kind/)
    expect((await runCli(['crds', '--out', out])).code).toBe(0)
    expect((await runCli(['crds', '--out', out, '--check'])).code).toBe(0)
  })
})
