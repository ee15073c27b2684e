import { createHash } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { verifySnapshot } from '../../../shared/config/compile-snapshot.ts'
import { parseApiKey } from '../../../shared/tenancy/api-key.ts'
import { resolveTenant } from '../../../shared/tenancy/resolve-tenant.ts'
import { examplesDir } from '../../support/read-yaml-documents.ts'
import { runCli } from '../../support/run-cli.ts'

function field(stdout: string, name: string): string {
  const value = new RegExp(`^${name}: +(\\S+)$`, 'm').exec(stdout)?.[1]
  if (value === undefined) throw new Error(`no ${name} in:\n${stdout}`)
  return value
}

/** The printed apiKeys entry: the two lines starting with "- id:". */
function snippetOf(stdout: string): string {
  const match = /^- id: .*\n {2}sha256: .*$/m.exec(stdout)
  if (match === null) throw new Error(`no snippet in:\n${stdout}`)
  return match[0]
}

describe('kinfctl key mint', () => {
  it('prints a key whose printed sha256 is the hash of its secret', async () => {
    const { code, stdout, stderr } = await runCli(['key', 'mint', '--tenant', 'acme'])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const key = field(stdout, 'key')
    const parsed = parseApiKey(key)
    expect(parsed).not.toBeNull()
    expect(field(stdout, 'id')).toBe(parsed?.id)
    const sha256 = createHash('sha256')
      .update(parsed?.secret ?? '')
      .digest('hex')
    expect(field(stdout, 'sha256')).toBe(sha256)
    expect(snippetOf(stdout)).toBe(`- id: ${parsed?.id}\n  sha256: ${sha256}`)
    expect(stdout).toContain(
      `kubectl create secret generic acme-api-key-${parsed?.id} --from-literal=api-key=${key}\n`,
    )
  })

  it('mints a key the edge accepts once its snippet is in the policy', async () => {
    const { stdout } = await runCli(['key', 'mint', '--id', 'acme07', '--tenant', 'acme'])
    const key = field(stdout, 'key')
    expect(key).toMatch(/^kinf_acme07_[A-Za-z0-9]{32}$/)
    const policy = [
      'apiVersion: kinference.dev/v1alpha1',
      'kind: InferencePolicy',
      'metadata: {name: minted, namespace: kinference}',
      'spec:',
      '  tenants:',
      '    - name: acme',
      '      models: ["*"]',
      '      apiKeys:',
      ...snippetOf(stdout)
        .split('\n')
        .map((line) => `        ${line}`),
      '  rules:',
      '    - name: all',
      '      action: {route: {backends: [qwen-8b-local]}}',
    ].join('\n')
    const file = join(mkdtempSync(join(tmpdir(), 'kinfctl-key-')), 'policy.yaml')
    writeFileSync(file, policy)
    const compiled = await runCli(['compile', join(examplesDir, 'platform.yaml'), file])
    expect(compiled.stderr).toMatch(/^compiled/)
    const snapshot = await verifySnapshot(JSON.parse(compiled.stdout))
    expect(await resolveTenant(snapshot, key)).toEqual({ tenant: 'acme', keyId: 'acme07' })
    expect(
      await resolveTenant(snapshot, `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`),
    ).toEqual({
      error: 'unknown',
    })
  })

  it('never mints the same key twice', async () => {
    const keys = new Set<string>()
    for (let i = 0; i < 20; i++) keys.add(field((await runCli(['key', 'mint'])).stdout, 'key'))
    expect(keys.size).toBe(20)
  })

  it.each([
    [['key'], /no action given/],
    [['key', 'revoke'], /unknown action "revoke"/],
    [['key', 'mint', 'extra'], /unexpected argument "extra"/],
    [['key', 'mint', '--id', 'No_Good'], /--id "No_Good" must be 4 to 32/],
    [['key', 'mint', '--tenant', 'Acme Corp'], /--tenant "Acme Corp" must be a DNS-1123 label/],
    [['key', 'mint', '--bogus'], /bogus/],
  ])('refuses %j with exit 2 and the usage', async (argv, message) => {
    const { code, stdout, stderr } = await runCli(argv)
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toMatch(message)
    expect(stderr).toContain('Usage: kinfctl key mint')
  })
})
