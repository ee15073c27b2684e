import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseAllDocuments, stringify } from 'yaml'
import type { CliIo } from '../../../control-plane/kinfctl/cli-io.ts'
import { compileCommand } from '../../../control-plane/kinfctl/commands/compile.ts'
import { validateInputs } from '../../../control-plane/kinfctl/validation-report.ts'
import { fuzzParameters, fuzzTimeoutMs } from '../../support/fuzz-runs.ts'

const runs = 300
const examplesDir = join('infra', 'k8s', 'examples')
const exampleTexts = readdirSync(examplesDir)
  .filter((name) => name.endsWith('.yaml'))
  .sort()
  .map((name) => readFileSync(join(examplesDir, name), 'utf8'))
/** Every example in one input, as `kinfctl validate infra/k8s/examples` reads them. */
const allExamples = exampleTexts.join('\n---\n')

/**
 * validate's property: a report, never a throw; every resource that is not valid names its
 * problems, and every problem carries the file, a line and a message (and the field, where
 * the problem is in one).
 */
async function reportsEveryProblem(text: string): Promise<void> {
  const report = await validateInputs(['-'], 'default', async () => text)
  for (const resource of report.resources) {
    expect(resource.filename).toBe('<stdin>')
    if (resource.status === 'valid' || resource.status === 'skipped') continue
    expect(resource.errors.length).toBeGreaterThan(0)
    for (const error of resource.errors) {
      expect(error.line, JSON.stringify(error)).toBeGreaterThanOrEqual(1)
      expect(error.column).toBeGreaterThanOrEqual(0)
      expect(typeof error.field).toBe('string')
      expect(error.message.length).toBeGreaterThan(0)
    }
  }
  const { valid, invalid, errors, skipped } = report.summary
  expect(valid + invalid + errors + skipped).toBe(report.resources.length)
}

/** compile's: exit 0 with a snapshot on standard output, or 1 with the problems on stderr. */
async function compilesOrExplains(text: string): Promise<void> {
  let out = ''
  let err = ''
  const io: CliIo = {
    stdout: (chunk) => {
      out += chunk
    },
    stderr: (chunk) => {
      err += chunk
    },
    readStdin: async () => text,
    untilInterrupted: () => new Promise(() => {}),
    env: {},
  }
  const code = await compileCommand(['-'], io)
  expect([0, 1]).toContain(code)
  if (code === 0)
    expect((JSON.parse(out) as { hash?: unknown }).hash).toMatch(/^sha256:[0-9a-f]{64}$/)
  else expect(err.length).toBeGreaterThan(0)
}

const yamlNoise = fc.constantFrom(
  '&a ',
  '*a',
  '<<: *a',
  '!!binary ',
  '!!str ',
  '!!int ',
  '!!python/object:os.system ',
  '? ',
  '- ',
  ': ',
  '"',
  "'",
  '|',
  '>-',
  '\t',
  '  ',
  '#',
  '---',
  '...',
  '%YAML 1.1',
  '{',
  '}',
  '[',
  ']',
  ',',
  '~',
  'null',
  'true',
  'NaN',
  '.inf',
  '0x1F',
  '1e400',
  '-0',
  '0o17',
  '2026-12-01',
  '\uFEFF',
  '\u0000',
  'é',
  '💥',
)
/** Example files edited as text: lines dropped, doubled (duplicate keys), re-indented, noise. */
const editedText = fc
  .tuple(
    fc.constantFrom(...exampleTexts),
    fc.array(
      fc.record({
        line: fc.nat(),
        at: fc.nat(),
        kind: fc.constantFrom('drop', 'double', 'indent', 'dedent', 'insert', 'cut'),
        noise: fc.oneof(yamlNoise, fc.string({ maxLength: 6 })),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  )
  .map(([text, edits]) => {
    const lines = text.split('\n')
    for (const edit of edits) {
      const i = edit.line % lines.length
      const line = lines[i] ?? ''
      const at = edit.at % (line.length + 1)
      if (edit.kind === 'drop') lines.splice(i, 1)
      else if (edit.kind === 'double') lines.splice(i, 0, line)
      else if (edit.kind === 'indent') lines[i] = `  ${line}`
      else if (edit.kind === 'dedent') lines[i] = line.replace(/^ {1,2}/, '')
      else if (edit.kind === 'insert') lines[i] = line.slice(0, at) + edit.noise + line.slice(at)
      else lines[i] = line.slice(0, at)
    }
    return lines.join('\n')
  })

const exampleDocuments = exampleTexts.flatMap((text) =>
  parseAllDocuments(text).flatMap((doc) => {
    const value = doc.toJS() as unknown
    return value ? [value] : []
  }),
)
/** A value of the wrong type (or a hostile one) for any field. */
const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(-1, 0, 2 ** 53, 1e308, '', 'x'.repeat(10_000), [], {}, null, true, '__proto__'),
)
/** Paths into a document: its own keys at any depth, found by walking it. */
function pathsOf(
  value: unknown,
  prefix: (string | number)[] = [],
  out: (string | number)[][] = [],
) {
  out.push(prefix)
  if (typeof value === 'object' && value !== null && prefix.length < 8)
    for (const [key, child] of Object.entries(value))
      pathsOf(child, [...prefix, Array.isArray(value) ? Number(key) : key], out)
  return out
}
type Edit = { kind: 'drop' | 'replace' | 'duplicate'; path: number; value: unknown }
function applyEdit(document: unknown, edit: Edit): unknown {
  const copy = structuredClone(document)
  const paths = pathsOf(copy).slice(1)
  const path = paths[edit.path % Math.max(1, paths.length)]
  if (path === undefined) return edit.value
  let parent = copy as Record<string | number, unknown>
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>
  const last = path[path.length - 1] as string | number
  if (edit.kind === 'drop') {
    if (Array.isArray(parent)) parent.splice(Number(last), 1)
    else delete parent[last]
  } else if (edit.kind === 'replace') parent[last] = edit.value
  else if (Array.isArray(parent)) parent.push(structuredClone(parent[last]))
  return copy
}
/** The example resources with fields dropped, replaced by wrong types, list items doubled. */
const mutatedDocuments = fc
  .tuple(
    // A few at a time: validating every example takes ~20 ms, a few ~2 ms.
    fc.subarray(exampleDocuments, { minLength: 1, maxLength: 4 }),
    fc.array(
      fc.record({
        document: fc.nat(),
        edit: fc.record({
          kind: fc.constantFrom('drop', 'replace', 'duplicate'),
          path: fc.nat(),
          value: anyValue,
        }) as fc.Arbitrary<Edit>,
      }),
      { minLength: 1, maxLength: 3 },
    ),
  )
  .map(([documents, edits]) => {
    const out: unknown[] = [...documents]
    for (const { document, edit } of edits) {
      const i = document % out.length
      out[i] = applyEdit(out[i], edit)
    }
    return out
  })

describe('fuzz: CRD YAML through kinfctl validate and compile', () => {
  it('reports the examples valid, and compiles them', async () => {
    const report = await validateInputs(['-'], 'default', async () => allExamples)
    expect(report.summary.invalid + report.summary.errors).toBe(0)
    await compilesOrExplains(allExamples)
  })

  it(
    'reports every problem of example files edited as text',
    async () => {
      await fc.assert(
        fc.asyncProperty(editedText, async (text) => {
          await reportsEveryProblem(text)
          await compilesOrExplains(text)
        }),
        fuzzParameters(runs, 15_031),
      )
    },
    fuzzTimeoutMs(runs),
  )

  it(
    'reports every problem of example resources with fields dropped or of the wrong type',
    async () => {
      await fc.assert(
        fc.asyncProperty(mutatedDocuments, async (documents) => {
          const text = documents.map((d) => stringify(d)).join('---\n')
          await reportsEveryProblem(text)
          await compilesOrExplains(text)
        }),
        fuzzParameters(runs, 15_032),
      )
    },
    fuzzTimeoutMs(runs),
  )

  it(
    'reports arbitrary YAML and alias bombs without an exception',
    async () => {
      const bomb = fc.integer({ min: 2, max: 12 }).map((levels) => {
        const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]']
        for (let i = 1; i < levels; i++)
          lines.push(
            `a${i}: &a${i} [${Array(10)
              .fill(`*a${i - 1}`)
              .join(', ')}]`,
          )
        return lines.join('\n')
      })
      const text = fc.oneof(
        fc.string({ maxLength: 200 }),
        fc
          .array(
            fc.oneof(
              yamlNoise,
              fc.string({ maxLength: 4 }),
              fc.constantFrom(
                '\n',
                'kind: InferencePool\n',
                'apiVersion: kinference.dev/v1alpha1\n',
                'spec:\n',
              ),
            ),
            { maxLength: 40 },
          )
          .map((parts) => parts.join('')),
        fc.anything({ maxDepth: 3 }).map((value) => stringify(value) ?? ''),
        bomb,
        fc
          .integer({ min: 60, max: 2_000 })
          .map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
        fc
          .integer({ min: 60, max: 400 })
          .map((depth) => Array.from({ length: depth }, (_, i) => `${' '.repeat(i)}k:`).join('\n')),
      )
      await fc.assert(fc.asyncProperty(text, reportsEveryProblem), fuzzParameters(runs, 15_033))
    },
    fuzzTimeoutMs(runs),
  )
})
