import { referencesIn } from './hcl-parser.ts'
import type { Declared } from './load-terraform-module.ts'
import { type BlockBody, nestedBodies } from './terraform-body.ts'

/** What a reference may name besides declarations, where it appears. */
export interface ReferenceScope {
  /** Inside a block with for_each: each.key, each.value. */
  each: boolean
  /** Inside a block with count: count.index. */
  count: boolean
  /** Inside a resource or data block (provisioners, postconditions): self. */
  self: boolean
  /** Iterator names of the enclosing dynamic blocks. */
  iterators: ReadonlySet<string>
}

export interface FoundReference {
  /** The traversal split into its names: ["module", "eks", "cluster_name"]. */
  segments: string[]
  scope: ReferenceScope
  declared: Declared
}

/** Arguments whose expressions are not references to resolve. */
const skippedKeys: Record<string, ReadonlySet<string>> = {
  variable: new Set(['type']),
  module: new Set(['providers', 'source', 'version']),
  resource: new Set(['provider']),
  data: new Set(['provider']),
}

const noScope: ReferenceScope = { each: false, count: false, self: false, iterators: new Set() }

/** Every reference in a declaration's expressions, with the scope it appears in. */
export async function collectReferences(
  kind: 'variable' | 'output' | 'local' | 'module' | 'resource' | 'data' | 'provider',
  declared: Declared,
): Promise<FoundReference[]> {
  const expressions: { text: string; scope: ReferenceScope }[] = []
  const scope: ReferenceScope = {
    ...noScope,
    each: 'for_each' in declared.body,
    count: 'count' in declared.body,
    self: kind === 'resource' || kind === 'data',
  }
  walkBody(declared.body, scope, skippedKeys[kind] ?? new Set(), expressions)
  const found: FoundReference[] = []
  for (const { text, scope } of expressions) {
    for (const reference of await referencesIn(declared.file.path, text)) {
      found.push({ segments: splitReference(reference), scope, declared })
    }
  }
  return found
}

type Expressions = { text: string; scope: ReferenceScope }[]

function walkBody(
  body: BlockBody,
  scope: ReferenceScope,
  skip: ReadonlySet<string>,
  out: Expressions,
) {
  for (const [key, value] of Object.entries(body)) {
    if (skip.has(key)) continue
    if (key === 'dynamic') walkDynamic(value, scope, out)
    else if (key === 'lifecycle') walkLifecycle(value, scope, out)
    else walkValue(value, scope, out)
  }
}

function walkValue(value: unknown, scope: ReferenceScope, out: Expressions): void {
  if (typeof value === 'string') {
    if (value.includes('${') || value.includes('%{')) out.push({ text: value, scope })
  } else if (Array.isArray(value)) {
    for (const item of value) walkValue(item, scope, out)
  } else if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) walkValue(item, scope, out)
  }
}

/** `dynamic "x" { for_each = ..., iterator = it, content { it.value } }`. */
function walkDynamic(value: unknown, scope: ReferenceScope, out: Expressions): void {
  if (typeof value !== 'object' || value === null) return
  for (const [label, bodies] of Object.entries(value)) {
    for (const body of nestedBodies(bodies)) {
      walkValue(body.for_each, scope, out)
      const iterator = typeof body.iterator === 'string' ? bareName(body.iterator) : label
      const inner = { ...scope, iterators: new Set([...scope.iterators, iterator]) }
      walkValue(body.content, inner, out)
      walkValue(body.labels, inner, out)
    }
  }
}

/** ignore_changes lists attribute names of the block itself, not references. */
function walkLifecycle(value: unknown, scope: ReferenceScope, out: Expressions): void {
  for (const body of nestedBodies(value)) walkBody(body, scope, new Set(['ignore_changes']), out)
}

const bareName = (expression: string) => expression.replace(/^\$\{(.*)\}$/s, '$1').trim()

/** `local.a."k"` (the parser quotes index keys) into ["local", "a", "k"]. */
export function splitReference(value: string): string[] {
  return [...value.matchAll(/"((?:[^"\\]|\\.)*)"|([^.]+)/g)].map((m) => m[1] ?? m[2] ?? '')
}
