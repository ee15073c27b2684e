import { isMap, isScalar, isSeq, type Node, parseDocument, type YAMLMap } from 'yaml'

/** One documented value of the chart: its dotted key, type, default and the comment above it. */
export interface ChartValue {
  key: string
  type: string
  defaultValue: string
  description: string
}

/** What the README says of the chart besides its values (from Chart.yaml). */
export interface ChartFacts {
  name: string
  version: string
  appVersion: string
  description: string
}

/**
 * Every value of `values.yaml`, in file order: a map with keys is a section, anything else
 * (a scalar, a list, an empty map) is a value. A value's description is the comment above
 * its key, else its section's: the file's comments are the only source, so every key a user
 * sets should have one (the test says which do not).
 */
export function chartValues(valuesText: string): ChartValue[] {
  const document = parseDocument(valuesText)
  const root = document.contents
  if (!isMap(root)) throw new Error('values.yaml: the top level must be a mapping')
  return sectionValues(root, '', '')
}

function sectionValues(map: YAMLMap, prefix: string, section: string): ChartValue[] {
  const values: ChartValue[] = []
  map.items.forEach((pair, index) => {
    const keyNode = pair.key as Node | null
    // The parser hangs a nested map's first comment on the map: it is its first key's.
    const own = commentOf(keyNode) || (index === 0 && prefix !== '' ? commentOf(map) : '')
    const name = isScalar(keyNode) ? String(keyNode.value) : String(keyNode)
    const key = prefix === '' ? name : `${prefix}.${name}`
    const value = pair.value as Node | null
    const description = own || section
    if (isMap(value) && value.items.length > 0)
      values.push(...sectionValues(value, key, own || section))
    else
      values.push({
        key,
        type: typeOf(value),
        defaultValue: JSON.stringify(value?.toJSON() ?? null),
        description,
      })
  })
  return values
}

/** The last paragraph of the comment above a node: a blank line ends what belongs to it. */
function commentOf(node: Node | null | undefined): string {
  const lines = ((node as { commentBefore?: string | null } | null)?.commentBefore ?? '').split(
    '\n',
  )
  const blank = lines.map((line) => line.trim() === '').lastIndexOf(true)
  return lines
    .slice(blank + 1)
    .map((line) => line.trim())
    .join(' ')
}

function typeOf(node: Node | null): string {
  if (isSeq(node)) return 'list'
  if (isMap(node)) return 'map'
  if (!isScalar(node)) return 'null'
  const value = node.value
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'number'
  if (typeof value === 'boolean') return 'bool'
  return value === null ? 'null' : 'string'
}

const cell = (text: string) => text.replaceAll('|', '\\|')

/** The chart's README: what it installs, how, and a table of every value (chartValues). */
export function renderChartReadme(facts: ChartFacts, valuesText: string): string {
  const rows = chartValues(valuesText).map(
    (v) => `| \`${v.key}\` | ${v.type} | \`${cell(v.defaultValue)}\` | ${cell(v.description)} |`,
  )
  return [
    `# ${facts.name}`,
    '',
    `Chart ${facts.version}, Kinference ${facts.appVersion}. ${facts.description}`,
    '',
    '<!-- Generated from values.yaml by `npm run chart-readme`; edit the comments there. -->',
    '',
    '```sh',
    `helm install kinference infra/helm/${facts.name} --namespace kinference --create-namespace -f my-values.yaml`,
    '```',
    '',
    'The chart creates no Secret: create the ones `secrets.*` names first. docs/deploy.md has the whole path (Terraform, the vLLM workers, the edge); `values.schema.json` refuses unknown keys and bad values.',
    '',
    '## Values',
    '',
    '| key | type | default | description |',
    '| --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n')
}
