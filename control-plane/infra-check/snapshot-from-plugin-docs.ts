import { readFile } from 'node:fs/promises'
import type { SchemaBlock } from './provider-schema.ts'

/**
 * Reads a provider's generated reference page (tfplugindocs' `## Schema` section:
 * `### Required` / `### Optional` / `### Read-Only` lists and `### Nested Schema for`
 * sections) into the snapshot's shape. How the committed snapshots were made:
 *   node control-plane/infra-check/snapshot-from-plugin-docs.ts random_password=docs/resources/password.md ...
 * prints {"random_password": {...}} for schema/<provider>.json's resources or dataSources.
 */
export function schemaFromPluginDocs(markdown: string): SchemaBlock {
  const sections = splitSections(markdown.slice(markdown.indexOf('## Schema')))
  const root = blockFrom(sections.get('') ?? [])
  for (const [path, lines] of sections) {
    if (path === '') continue
    const parent = path
      .split('.')
      .slice(0, -1)
      .reduce<SchemaBlock | undefined>((b, name) => b?.blocks?.[name], root)
    const name = path.split('.').at(-1) ?? path
    if (parent?.blocks?.[name]) parent.blocks[name] = blockFrom(lines)
  }
  return root
}

/** Lines of the top-level schema ('') and of each nested block, by dotted path. */
function splitSections(markdown: string): Map<string, string[]> {
  const sections = new Map<string, string[]>([['', []]])
  let current: string[] | undefined = sections.get('')
  for (const line of markdown.split('\n')) {
    const nested = /^<a id="nestedblock--([\w-]+)"><\/a>/.exec(line)
    const attribute = /^<a id="nestedatt--/.test(line)
    if (nested) {
      current = []
      sections.set(nested[1]?.replaceAll('--', '.') ?? '', current)
    } else if (attribute || /^## /.test(line.replace('## Schema', ''))) current = undefined
    else current?.push(line)
  }
  return sections
}

function blockFrom(lines: readonly string[]): SchemaBlock {
  const block: Required<SchemaBlock> = {
    required: [],
    optional: [],
    readOnly: [],
    sensitive: [],
    blocks: {},
  }
  let list: string[] | undefined
  for (const line of lines) {
    const heading = /^(?:### )?(Required|Optional|Read-Only):?$/.exec(line.trim())
    if (heading)
      list = { Required: block.required, Optional: block.optional, 'Read-Only': block.readOnly }[
        heading[1] as 'Required'
      ]
    const item = /^- `(\w+)` \(([^)]*)\)/.exec(line)
    if (!item || !list) continue
    const [, name = '', kind = ''] = item
    const isBlock = kind.startsWith('Block') && list !== block.readOnly
    if (isBlock) block.blocks[name] = {}
    if (!isBlock || list === block.required) list.push(name)
    if (kind.includes('Sensitive')) block.sensitive.push(name)
  }
  return withoutEmpty(block)
}

/** The snapshot leaves out empty lists, so its files stay short. */
function withoutEmpty(block: Required<SchemaBlock>): SchemaBlock {
  const kept = Object.entries(block).filter(([, v]) =>
    Array.isArray(v) ? v.length > 0 : Object.keys(v).length > 0,
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
