import { createRequire } from 'node:module'
import { z } from 'zod'

/**
 * HashiCorp's HCL parser (hcl/v2 compiled to WebAssembly, the @cdktn/hcl2json package).
 * Loaded through require and typed here, not through the package's declarations: those
 * reference TypeScript's DOM library, which would retype fetch and Response for the
 * whole Node program.
 */
interface Hcl2Json {
  parse(filename: string, contents: string): Promise<unknown>
  getReferencesInExpression(filename: string, expression: string): Promise<unknown>
  getExpressionAst(filename: string, expression: string): Promise<unknown>
}

const hcl2json = createRequire(import.meta.url)('@cdktn/hcl2json') as Hcl2Json

/** A file's blocks and arguments as JSON, expressions as "${...}" strings; throws on syntax errors. */
export function parseHcl(file: string, text: string): Promise<unknown> {
  return hcl2json.parse(file, text)
}

const References = z.array(z.object({ value: z.string() }))

/** The traversals an expression reads (`var.x`, `module.m.o`), for-expression iterators left out. */
export async function referencesIn(file: string, expression: string): Promise<string[]> {
  const found = References.parse(await hcl2json.getReferencesInExpression(file, expression))
  return found.map((reference) => reference.value)
}

const Range = z.object({
  start: z.object({ byte: z.number() }),
  end: z.object({ byte: z.number() }),
})

/** The parts of an expression's syntax tree a type constraint needs. */
export interface ExpressionNode {
  type: string
  /** A function call's name. */
  name?: string
  /** Byte ranges of a function call's arguments in the expression. */
  argsRanges?: { start: { byte: number }; end: { byte: number } }[]
  /** An object constructor's keys and their value expressions. */
  items?: Record<string, string>
  children: ExpressionNode[]
}

const ExpressionNode: z.ZodType<ExpressionNode> = z.lazy(() =>
  z
    .object({
      type: z.string(),
      meta: z
        .object({
          name: z.string().optional(),
          argsRanges: z.array(Range).optional(),
          items: z.record(z.string(), z.string()).optional(),
        })
        .optional(),
      children: z.array(ExpressionNode).optional(),
    })
    .transform(({ type, meta, children }) => ({ type, ...meta, children: children ?? [] })),
)

/** The syntax tree of an expression, or null when it does not parse. */
export async function expressionAst(
  file: string,
  expression: string,
): Promise<ExpressionNode | null> {
  const ast = await hcl2json.getExpressionAst(file, expression).catch(() => null)
  const parsed = ExpressionNode.safeParse(ast)
  return parsed.success ? parsed.data : null
}
