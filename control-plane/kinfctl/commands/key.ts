import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { ResourceName } from '../../../shared/crd/object-meta.ts'
import { mintApiKey, sha256HexOf } from '../../../shared/tenancy/api-key.ts'
import { type CliIo, exitCode, UsageError } from '../cli-io.ts'

export const keyUsage = `Usage: kinfctl key mint [--id ID] [--tenant NAME]

Mints an API key kinf_<id>_<secret> (a secret of 32 base62 characters: 190 random
bits) and prints it once, with its id and the SHA-256 of the secret. Only the hash
goes into the InferencePolicy (the tenant's apiKeys); the key itself is for the
client, e.g. in a Kubernetes Secret (the kubectl line printed). Nothing is stored.

Options:
  --id ID          the key's id: 4 to 32 lower-case letters or digits (default: random)
  --tenant NAME    the tenant it is for (names the printed Secret and snippet)
`

export async function keyCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { id: { type: 'string' }, tenant: { type: 'string' } },
  })
  const [action, ...rest] = positionals
  if (action !== 'mint') {
    throw new UsageError(action === undefined ? 'no action given' : `unknown action "${action}"`)
  }
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`)
  if (values.id !== undefined && !/^[a-z0-9]{4,32}$/.test(values.id)) {
    throw new UsageError(`--id "${values.id}" must be 4 to 32 lower-case letters or digits`)
  }
  if (values.tenant !== undefined && !ResourceName.safeParse(values.tenant).success) {
    throw new UsageError(`--tenant "${values.tenant}" must be a DNS-1123 label`)
  }
  const minted = mintApiKey((n) => new Uint8Array(randomBytes(n)), { id: values.id })
  const sha256 = await sha256HexOf(minted.secret)
  const tenant = values.tenant ?? '<tenant>'
  const secretName = `${values.tenant ?? 'kinference'}-api-key-${minted.id}`
  io.stdout(
    [
      `key:    ${minted.key}`,
      `id:     ${minted.id}`,
      `sha256: ${sha256}`,
      '',
      'The key is shown only now; only its hash is kept. In the InferencePolicy, add under',
      `spec.tenants[name: ${tenant}].apiKeys:`,
      '',
      `- id: ${minted.id}`,
      `  sha256: ${sha256}`,
      '',
      'To hand the key to a client running in Kubernetes:',
      '',
      `kubectl create secret generic ${secretName} --from-literal=api-key=${minted.key}`,
      '',
    ].join('\n'),
  )
  return exitCode.ok
}
