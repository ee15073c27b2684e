import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseTerraformFile } from './parse-terraform-file.ts'
import { createSourceLocator, type SourceLocator } from './source-locator.ts'
import type { BlockBody, TerraformBody } from './terraform-body.ts'
import type { TerraformFinding } from './terraform-finding.ts'

export interface TerraformFile {
  path: string
  locator: SourceLocator
  body: TerraformBody
}

/** A declaration and where it is: a variable, output, local, module call, resource... */
export interface Declared {
  name: string
  file: TerraformFile
  line: number
  body: BlockBody
}

export interface TypedDeclared extends Declared {
  type: string
}

/** One directory of .tf files: a Terraform module, its declarations merged across files. */
export interface TerraformModule {
  dir: string
  /** False when a file failed to parse: its declarations are unknown. */
  complete: boolean
  files: TerraformFile[]
  settings: Declared[]
  providers: Declared[]
  variables: Map<string, Declared>
  outputs: Map<string, Declared>
  /** A local's body is `{ value }`. */
  locals: Map<string, Declared>
  calls: Map<string, Declared>
  /** Keyed `type.name`. */
  resources: Map<string, TypedDeclared>
  dataSources: Map<string, TypedDeclared>
}

export async function loadTerraformModule(
  dir: string,
): Promise<{ module: TerraformModule; findings: TerraformFinding[] }> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.tf')).sort()
  const module = emptyModule(dir)
  const findings: TerraformFinding[] = []
  for (const name of names) {
    const path = join(dir, name)
    const text = await readFile(path, 'utf8')
    const parsed = await parseTerraformFile(path, text)
    if (!parsed.ok) {
      findings.push(parsed.finding)
      module.complete = false
      continue
    }
    const file = { path, locator: createSourceLocator(text), body: parsed.body }
    module.files.push(file)
    findings.push(...addDeclarations(module, file))
  }
  return { module, findings }
}

function emptyModule(dir: string): TerraformModule {
  return {
    dir,
    complete: true,
    files: [],
    settings: [],
    providers: [],
    variables: new Map(),
    outputs: new Map(),
    locals: new Map(),
    calls: new Map(),
    resources: new Map(),
    dataSources: new Map(),
  }
}

type Collection = 'variables' | 'outputs' | 'calls' | 'resources' | 'dataSources' | 'locals'

/** One declaration of a file, the map it goes in and the key it has there. */
interface Entry {
  kind: string
  into: Collection
  key: string
  declared: Declared | TypedDeclared
}

function addDeclarations(module: TerraformModule, file: TerraformFile): TerraformFinding[] {
  const at = (kind: string, labels: string[]) => file.locator.blockLine(kind, labels)
  for (const body of file.body.terraform ?? []) {
    module.settings.push({ name: 'terraform', file, line: at('terraform', []), body })
  }
  for (const [name, bodies] of Object.entries(file.body.provider ?? {})) {
    for (const body of bodies)
      module.providers.push({ name, file, line: at('provider', [name]), body })
  }
  const findings: TerraformFinding[] = []
  for (const { kind, into, key, declared } of entries(file)) {
    const map = module[into] as Map<string, Declared>
    if (map.has(key)) {
      findings.push({
        file: file.path,
        line: declared.line,
        message: `${kind} ${key} is declared twice`,
      })
    }
    map.set(key, declared)
  }
  return findings
}

function entries(file: TerraformFile): Entry[] {
  const { body, locator } = file
  const labelled = (kind: string, into: Collection, blocks?: Record<string, BlockBody[]>) =>
    Object.entries(blocks ?? {}).flatMap(([name, bodies]) =>
      bodies.map((one, nth) => ({
        kind,
        into,
        key: name,
        declared: { name, file, line: locator.blockLine(kind, [name], nth), body: one },
      })),
    )
  const typed = (
    kind: string,
    into: Collection,
    blocks?: Record<string, Record<string, BlockBody[]>>,
  ) =>
    Object.entries(blocks ?? {}).flatMap(([type, byName]) =>
      Object.entries(byName).flatMap(([name, bodies]) =>
        bodies.map((one, nth) => ({
          kind,
          into,
          key: `${type}.${name}`,
          declared: {
            name,
            type,
            file,
            line: locator.blockLine(kind, [type, name], nth),
            body: one,
          },
        })),
      ),
    )
  const start = locator.blockLine('locals', [])
  const locals = (body.locals ?? []).flatMap((block) =>
    Object.entries(block).map(([name, value]) => ({
      kind: 'local',
      into: 'locals' as const,
      key: name,
      declared: { name, file, line: locator.assignmentLine(name, start), body: { value } },
    })),
  )
  return [
    ...labelled('variable', 'variables', body.variable),
    ...labelled('output', 'outputs', body.output),
    ...labelled('module', 'calls', body.module),
    ...typed('resource', 'resources', body.resource),
    ...typed('data', 'dataSources', body.data),
    ...locals,
  ]
}
