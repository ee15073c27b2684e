import { readdir, readFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { z } from 'zod'
import { KinfError } from '../../../shared/errors/kinf-error.ts'

/** Argument and nested-block names of one resource type or nested block. */
export interface SchemaBlock {
  required?: string[]
  optional?: string[]
  /** Computed only: set by the provider, never by configuration. */
  readOnly?: string[]
  /** Attributes the provider marks sensitive (outputs of them must be sensitive too). */
  sensitive?: string[]
  blocks?: Record<string, SchemaBlock>
  /** Attributes holding objects (`bindings = [{ ... }]`): the keys inside them. */
  nested?: Record<string, SchemaBlock>
}

const names = z.array(z.string()).optional()
const SchemaBlock: z.ZodType<SchemaBlock> = z.lazy(() =>
  z.strictObject({
    required: names,
    optional: names,
    readOnly: names,
    sensitive: names,
    blocks: z.record(z.string(), SchemaBlock).optional(),
    nested: z.record(z.string(), SchemaBlock).optional(),
  }),
)

/** One file of infra/terraform/schema: the types in use of one provider, at one version. */
export const ProviderSchema = z.strictObject({
  provider: z.string(),
  version: z.string(),
  /** Where the names were taken from (see the schema folder's README). */
  source: z.string(),
  resources: z.record(z.string(), SchemaBlock),
  dataSources: z.record(z.string(), SchemaBlock),
})
export type ProviderSchema = z.infer<typeof ProviderSchema>

/** Snapshots by provider local name (the file name: aws.json -> aws). */
export type ProviderSchemas = ReadonlyMap<string, ProviderSchema>

export async function loadProviderSchemas(dir: string): Promise<ProviderSchemas> {
  const files = (await readdir(dir)).filter((name) => name.endsWith('.json')).sort()
  const schemas = new Map<string, ProviderSchema>()
  for (const name of files) {
    const path = join(dir, name)
    const parsed = ProviderSchema.safeParse(JSON.parse(await readFile(path, 'utf8')))
    if (!parsed.success) {
      throw new KinfError('invalid_config', `${path}: ${z.prettifyError(parsed.error)}`)
    }
    schemas.set(basename(name, '.json'), parsed.data)
  }
  return schemas
}

/** Names configuration may set in a block: its arguments and nested blocks. */
export function settableNames(block: SchemaBlock): Set<string> {
  return new Set([
    ...(block.required ?? []),
    ...(block.optional ?? []),
    ...Object.keys(block.blocks ?? {}),
  ])
}
