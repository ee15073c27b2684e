import { readFile } from 'node:fs/promises'
import type { SchemaBlock } from './provider-schema.ts'

/**
 * Reads a provider's generated reference page (tfplugindocs' `## Schema` section:
 * `### Required` / `### Optional` / `### Read-Only` lists and `### Nested Schema for`
 * sections) into the snapshot's shape. How the committed snapshots were made:
 *   node control-plane/lab/terraform-check/snapshot-from-plugin-docs.ts random_password=docs/resources/password.md ...
 * prints {"random_password": {...}} for schema/<provider>.json's resources or dataSources.
 */
export function schemaFromPluginDocs(markdown: string): SchemaBlock {
  const sections = splitSections(markdown.slice(markdown.indexOf('## Schema')))
  const root = blockFrom(sections.get('') ?? [])
  for (const [path, lines] of sections) {
    if (path === '') continue
    const names = path.split('.')
    const parent = names.slice(0, -1).reduce<SchemaBlock | undefined>(childOf, root)
    const name = names.at(-1) ?? path
    if (parent?.blocks?.[name]) parent.blocks[name] = blockFrom(lines)
    else if (parent?.nested?.[name]) parent.nested[name] = blockFrom(lines)
  }
  return root
}

const childOf = (block: SchemaBlock | undefined, name: string) =>
  block?.blocks?.[name] ?? block?.nested?.[name]

/** Lines of the top-level schema ('') and of each nested block or attribute, by dotted path. */
function splitSections(markdown: string): Map<string, string[]> {
  const sections = new Map<string, string[]>([['', []]])
  let current: string[] | undefined = sections.get('')
  for (const line of markdown.split('\n')) {
    const anchor = /^<a id="nested(?:block|att)--([\w-]+)"><\/a>/.exec(line)
    if (anchor) {
      current = []
      sections.set(anchor[1]?.replaceAll('--', '.') ?? '', current)
    } else if (/^## /.test(line) && !line.startsWith('## Schema')) {
      current = undefined
    } else {
      current?.push(line)
    }
  }
  return sections
}

type Lists = Required<Pick<SchemaBlock, 'required' | 'optional' | 'readOnly' | 'sensitive'>>

function blockFrom(lines: readonly string[]): SchemaBlock {
  const lists: Lists = { required: [], optional: [], readOnly: [], sensitive: [] }
  const blocks: Record<string, SchemaBlock> = {}
  const nested: Record<string, SchemaBlock> = {}
  let list: string[] | undefined
  for (const line of lines) {
    const heading = /^(?:### )?(Required|Optional|Read-Only):?$/.exec(line.trim())?.[1]
    if (heading)
      list =
        heading === 'Read-Only'
          ? lists.readOnly
          : heading === 'Required'
            ? lists.required
            : lists.optional
    const item = /^- `(\w+)` \(([^)]*)\)/.exec(line)
    if (!item || !list) continue
    const [, name = '', kind = ''] = item
    const settable = list !== lists.readOnly
    if (kind.startsWith('Block') && settable) blocks[name] = {}
    // A map of objects has the caller's keys, not the schema's: it is not descended into.
    else if (
      /^Attributes( List| Set)?\b/.test(kind) &&
      !kind.startsWith('Attributes Map') &&
      settable
    )
      nested[name] = {}
    if (!kind.startsWith('Block') || list === lists.required) list.push(name)
    if (kind.includes('Sensitive')) lists.sensitive.push(name)
  }
  return withoutEmpty({ ...lists, blocks, nested })
}

/** The snapshot leaves out empty lists, so its files stay short. */
function withoutEmpty(block: Required<SchemaBlock>): SchemaBlock {
  const kept = Object.entries(block).filter(([, value]) =>
    Array.isArray(value) ? value.length > 0 : Object.keys(value).length > 0,
  )
  return Object.fromEntries(kept)
}

if (import.meta.main) {
  const out: Record<string, SchemaBlock> = {}
  for (const arg of process.argv.slice(2)) {
    const [type = '', path = ''] = arg.split('=')
    out[type] = schemaFromPluginDocs(await readFile(path, 'utf8'))
  }
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`)
}
