import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { z } from 'zod'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { loadTerraformModule } from './load-terraform-module.ts'

/**
 * The interface of one registry module at one version (infra/terraform/schema/modules):
 * its variables and outputs, so calls to it are checked like calls to a local module.
 */
export const RegistryModuleSnapshot = z.strictObject({
  source: z.string(),
  version: z.string(),
  /** How it was made (see the schema folder's README). */
  from: z.string(),
  required: z.array(z.string()),
  optional: z.array(z.string()),
  outputs: z.array(z.string()),
  sensitiveOutputs: z.array(z.string()),
})
export type RegistryModuleSnapshot = z.infer<typeof RegistryModuleSnapshot>

/** Snapshots by registry source (namespace/name/provider). */
export type RegistryModules = ReadonlyMap<string, RegistryModuleSnapshot>

export async function loadRegistryModules(dir: string): Promise<RegistryModules> {
  const names = await readdir(dir).catch(() => [])
  const snapshots = new Map<string, RegistryModuleSnapshot>()
  for (const name of names.filter((file) => file.endsWith('.json')).sort()) {
    const path = join(dir, name)
    const parsed = RegistryModuleSnapshot.safeParse(JSON.parse(await readFile(path, 'utf8')))
    if (!parsed.success) {
      throw new KinfError('invalid_config', `${path}: ${z.prettifyError(parsed.error)}`)
    }
    snapshots.set(parsed.data.source, parsed.data)
  }
  return snapshots
}

/** Reads a module's checkout with the same parser, into a snapshot. */
export async function snapshotRegistryModule(
  dir: string,
  source: string,
  version: string,
): Promise<RegistryModuleSnapshot> {
  const { module } = await loadTerraformModule(dir)
  const variables = [...module.variables.values()]
  const outputs = [...module.outputs.values()]
  return {
    source,
    version,
    from: `the root .tf files of ${source} ${version} (its git tag), parsed by registry-module-snapshot.ts`,
    required: variables
      .filter((v) => !('default' in v.body))
      .map((v) => v.name)
      .sort(),
    optional: variables
      .filter((v) => 'default' in v.body)
      .map((v) => v.name)
      .sort(),
    outputs: outputs.map((o) => o.name).sort(),
    sensitiveOutputs: outputs
      .filter((o) => o.body.sensitive === true)
      .map((o) => o.name)
      .sort(),
  }
}

if (import.meta.main) {
  const [dir = '.', source = '', version = ''] = process.argv.slice(2)
  const snapshot = await snapshotRegistryModule(dir, source, version)
  process.stdout.write(`${JSON.stringify(snapshot, null, 2)}\n`)
}
