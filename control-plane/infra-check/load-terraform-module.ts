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

function addDeclarations(module: TerraformModule, file: TerraformFile): TerraformFinding[] {
  const { body, locator } = file
  const at = (kind: string, labels: string[]) => locator.blockLine(kind, labels)
  const findings: TerraformFinding[] = []
  const add = (map: Map<string, Declared>, kind: string, key: string, declared: Declared) => {
    if (map.has(key)) {
      findings.push({
        file: file.path,
        line: declared.line,
        message: `${kind} ${key} is declared twice`,
      })
    }
    map.set(key, declared)
  }
  for (const settings of body.terraform ?? []) {
    module.settings.push({ name: 'terraform', file, line: at('terraform', []), body: settings })
  }
  for (const [name, bodies] of Object.entries(body.provider ?? {})) {
    for (const one of bodies)
      module.providers.push({ name, file, line: at('provider', [name]), body: one })
  }
  const labelled: [string, Record<string, BlockBody[]> | undefined, Map<string, Declared>][] = [
    ['variable', body.variable, module.variables],
    ['output', body.output, module.outputs],
    ['module', body.module, module.calls],
  ]
  for (const [kind, blocks, map] of labelled) {
    for (const [name, bodies] of Object.entries(blocks ?? {})) {
      for (const one of bodies)
        add(map, kind, name, { name, file, line: at(kind, [name]), body: one })
    }
  }
  for (const [kind, blocks, map] of [
    ['resource', body.resource, module.resources],
    ['data', body.data, module.dataSources],
  ] as const) {
    for (const [type, byName] of Object.entries(blocks ?? {})) {
      for (const [name, bodies] of Object.entries(byName)) {
        for (const one of bodies) {
          const declared = { name, type, file, line: at(kind, [type, name]), body: one }
          add(map, kind, `${type}.${name}`, declared)
        }
      }
    }
  }
  for (const locals of body.locals ?? []) {
    const start = at('locals', [])
    for (const [name, value] of Object.entries(locals)) {
      add(module.locals, 'local', name, {
        name,
        file,
        line: locator.assignmentLine(name, start),
        body: { value },
      })
    }
  }
  return findings
}
