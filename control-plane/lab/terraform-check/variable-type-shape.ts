import { expressionAst } from './hcl-parser.ts'
import type { TerraformModule } from './load-terraform-module.ts'

/** What a variable's type constraint says about the attributes a reference may read. */
export type TypeShape =
  | { kind: 'object'; attributes: ReadonlyMap<string, TypeShape> }
  /** list, set, map: a reference indexes it (one segment) to reach the element. */
  | { kind: 'collection'; element: TypeShape }
  /** A primitive, any, a tuple: nothing further is checked. */
  | { kind: 'opaque' }

const opaque: TypeShape = { kind: 'opaque' }
const collections = new Set(['list', 'set', 'map'])

/** Shapes of the module's variables that have a type constraint. */
export async function variableShapes(module: TerraformModule): Promise<Map<string, TypeShape>> {
  const shapes = new Map<string, TypeShape>()
  for (const variable of module.variables.values()) {
    const type = variable.body.type
    if (typeof type === 'string')
      shapes.set(variable.name, await typeShape(type.replace(/^\$\{([\s\S]*)\}$/, '$1')))
  }
  return shapes
}

/** Reads a type constraint (`object({ a = optional(list(string)) })`) into a shape. */
export async function typeShape(expression: string): Promise<TypeShape> {
  const ast = await expressionAst('type.tf', expression)
  if (ast?.type !== 'function' || ast.name === undefined) return opaque
  const first = ast.argsRanges?.[0]
  const argument = first ? expression.slice(first.start.byte, first.end.byte) : ''
  if (ast.name === 'optional') return typeShape(argument)
  if (collections.has(ast.name)) return { kind: 'collection', element: await typeShape(argument) }
  const object =
    ast.name === 'object' ? ast.children.find((child) => child.type === 'object') : undefined
  if (!object?.items) return opaque
  const attributes = new Map<string, TypeShape>()
  for (const [key, value] of Object.entries(object.items))
    attributes.set(key, await typeShape(value))
  return { kind: 'object', attributes }
}

/** The first attribute in `path` the shape does not have, or null when all resolve. */
export function missingAttribute(shape: TypeShape, path: readonly string[]): string | null {
  let current = shape
  for (const segment of path) {
    if (current.kind === 'opaque') return null
    if (current.kind === 'collection') {
      current = current.element
      continue
    }
    const next = current.attributes.get(segment)
    if (!next) return segment
    current = next
  }
  return null
}
