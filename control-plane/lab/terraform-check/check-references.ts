import type { FoundReference } from './collect-references.ts'
import type { TerraformModule } from './load-terraform-module.ts'
import type { ModuleIndex } from './module-index.ts'
import type { TerraformFinding } from './terraform-finding.ts'
import { missingAttribute, type TypeShape } from './variable-type-shape.ts'

const pathNames = new Set(['module', 'root', 'cwd'])
const eachNames = new Set(['key', 'value'])

/** Every var., local., module., data., resource and meta reference names something declared. */
export function checkReferences(
  module: TerraformModule,
  references: readonly FoundReference[],
  index: ModuleIndex,
  shapes: ReadonlyMap<string, TypeShape> = new Map(),
): TerraformFinding[] {
  return references.flatMap((reference) => {
    const problem = referenceProblem(module, reference, index, shapes)
    if (problem === null) return []
    const { file, line } = reference.declared
    return [
      {
        file: file.path,
        line: file.locator.textLine(problem.text, line),
        message: problem.message,
      },
    ]
  })
}

interface Problem {
  /** The reference as written, to find its line. */
  text: string
  message: string
}

function referenceProblem(
  module: TerraformModule,
  { segments, scope }: FoundReference,
  index: ModuleIndex,
  shapes: ReadonlyMap<string, TypeShape>,
): Problem | null {
  const [root = '', first = '', second] = segments
  const text = segments.slice(0, 2).join('.')
  const unless = (ok: boolean, message: string) => (ok ? null : { text, message })
  switch (root) {
    case 'var':
      if (!module.variables.has(first)) return { text, message: `undefined variable var.${first}` }
      return attributeProblem(first, segments.slice(2), shapes.get(first))
    case 'local':
      return unless(module.locals.has(first), `undefined local value local.${first}`)
    case 'module':
      return moduleProblem(module, first, second, index)
    case 'data':
      return dataProblem(module, first, second)
    case 'each':
      return unless(scope.each && eachNames.has(first), `each.${first} outside a for_each block`)
    case 'count':
      return unless(scope.count && first === 'index', `count.${first} outside a count block`)
    case 'self':
      return unless(scope.self, 'self outside a resource')
    case 'path':
      return unless(
        pathNames.has(first),
        `unknown path.${first} (path.module, path.root, path.cwd)`,
      )
    case 'terraform':
      return unless(first === 'workspace', `unknown terraform.${first}`)
  }
  if (scope.iterators.has(root)) return null
  if (segments.length < 2) return { text: root, message: `unknown name ${root}` }
  return unless(module.resources.has(text), `reference to undeclared resource ${text}`)
}

function moduleProblem(
  module: TerraformModule,
  name: string,
  output: string | undefined,
  index: ModuleIndex,
): Problem | null {
  const call = module.calls.get(name)
  if (!call) return { text: `module.${name}`, message: `reference to undeclared module.${name}` }
  const callee = index.interfaceOf(module, call)
  if (output === undefined || !callee || callee.outputs.has(output)) return null
  return {
    text: `module.${name}.${output}`,
    message: `module.${name} has no output ${output} (${callee.label})`,
  }
}

function dataProblem(
  module: TerraformModule,
  type: string,
  name: string | undefined,
): Problem | null {
  const key = `${type}.${name}`
  if (module.dataSources.has(key)) return null
  return { text: `data.${key}`, message: `reference to undeclared data source data.${key}` }
}

/** `var.scorer.autoscaling.max_replica` against the variable's object type. */
function attributeProblem(
  name: string,
  path: string[],
  shape: TypeShape | undefined,
): Problem | null {
  const missing = shape ? missingAttribute(shape, path) : null
  if (missing === null) return null
  const upTo = path.slice(0, path.indexOf(missing) + 1)
  const written = upTo.map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`)).join('')
  // The source writes indexes as [0]: search for the part before the first one.
  const plain = upTo.findIndex((s) => /^\d+$/.test(s))
  const searched = ['var', name, ...upTo.slice(0, plain < 0 ? undefined : plain)].join('.')
  return {
    text: searched,
    message: `var.${name}${written}: the type of var.${name} has no attribute ${missing}`,
  }
}
