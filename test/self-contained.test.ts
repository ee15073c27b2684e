import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/**
 * A user's clone has nothing beside it: the reference material developers and CI keep
 * next to the checkout (../shared) is not there, so no code, test, script or config may
 * read from it, and comments may cite only documents the repository holds.
 */
const root = fileURLToPath(new URL('..', import.meta.url))
const self = relative(root, fileURLToPath(import.meta.url))

// docs/ and data/ (and Markdown anywhere) may describe where things came from.
const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter((file) => file !== '' && file !== self && !/^(docs|data)\/|\.md$/.test(file))
  .filter((file) => existsSync(join(root, file)))

const read = (file: string) => readFileSync(join(root, file), 'utf8')
const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length

function insideClone(path: string): boolean {
  const fromRoot = relative(root, path)
  return !fromRoot.startsWith('..') && !isAbsolute(fromRoot)
}

/** String literals as TypeScript sees them in scripts (not quotes inside other strings); quoted text elsewhere. */
function stringLiterals(file: string, text: string): { value: string; index: number }[] {
  if (!/\.[cm]?[jt]s$/.test(file)) {
    return [...text.matchAll(/(['"`])([^'"`\n]*)\1/g)].map((m) => ({
      value: m[2] ?? '',
      index: m.index,
    }))
  }
  const found: { value: string; index: number }[] = []
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest)
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node)) found.push({ value: node.text, index: node.getStart(source) })
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** The folder holding the clone, where developers and CI keep the reference material. */
const besideTheClone = `${dirname(resolve(root))}/`

function leavesTheClone(file: string, path: string): boolean {
  if (isAbsolute(path)) return path.startsWith(besideTheClone)
  if (!/^\.\.?\//.test(path)) return false
  // Imports, import.meta.url and tsconfig globs resolve from the file's own directory.
  const besideFile = resolve(root, dirname(file), path)
  if (!insideClone(besideFile)) return true
  // Nothing there: then it is read from the working directory, the root for npm and vitest.
  const named = besideFile.split(/[*?{[]/)[0] ?? besideFile
  return !existsSync(named) && !insideClone(resolve(root, path))
}

interface Citation {
  index: number
  cited: string
  /** The repository file the citation needs. */
  doc: string
  /** What that file must contain: the cited section or legend entry. */
  marker?: RegExp
}

/** Notes that used to live outside the clone: cited by name, they must now be in docs/. */
const noteCitation =
  /\b(vllm-wire|peer-routers|routing-anchors(?:-\d+)?|workloads-and-limits|gateway-notes|infra-notes|controller-and-epp|style-anchors|architecture(?=\.md))\b/g
/** Any page cited by section (`vllm-wire.md §5.3`, across a comment's line break too). */
const sectionCitation = /\b([\w-]+)\.md[\s*/]*§\s*(\d+(?:\.\d+)*)/g
/** A peer project's short name before a path or an issue: read through the legend of peer-routers.md. */
const peerCitation = /\b(GIE|LDR|LDW|KVC|DYN|SGL|SMG|PS|AIB) (?=`|#\d)/g
/** The benchmark of the article Kinference was first described in: architecture.md §7. */
const referenceBenchmarkCitation = /\bthe reference benchmark\b/gi
/** Folders of the reference material, which the repository does not have. */
const referenceFolder = /\bshared\/(?:calibration|data|docs)(?![\w.-])/g

function citations(text: string): Citation[] {
  const all = (pattern: RegExp) => [...text.matchAll(pattern)]
  return [
    ...all(noteCitation).map((m) => ({ index: m.index, cited: m[0], doc: `docs/${m[1]}.md` })),
    ...all(sectionCitation).map((m) => ({
      index: m.index,
      cited: m[0].replace(/\s+\*?\s*/g, ' '),
      doc: `docs/${m[1]}.md`,
      marker: new RegExp(`^#+ §${m[2]?.replaceAll('.', '\\.')}(?![.\\d])`, 'm'),
    })),
    ...all(peerCitation).map((m) => ({
      index: m.index,
      cited: m[0].trim(),
      doc: 'docs/peer-routers.md',
      // A legend row: `| **GIE** |` (tables may be padded).
      marker: new RegExp(`^\\| \\*\\*${m[1]}\\*\\* +\\|`, 'm'),
    })),
    ...all(referenceBenchmarkCitation).map((m) => ({
      index: m.index,
      cited: m[0],
      doc: 'docs/architecture.md',
      marker: /^#+ .*\breference benchmark\b/im,
    })),
    ...all(referenceFolder).map((m) => ({ index: m.index, cited: m[0], doc: m[0] })),
  ].sort((a, b) => a.index - b.index)
}

function missing({ doc, marker }: Citation): string | null {
  if (!existsSync(join(root, doc))) return `${doc} is not in the repository`
  if (marker && !marker.test(read(doc))) return `${doc} has no such section or legend entry`
  return null
}

describe('the repository is self-contained', () => {
  it('reads no data from outside the clone (paths in code, tests, scripts and config)', () => {
    const problems = files.flatMap((file) => {
      const text = read(file)
      return stringLiterals(file, text)
        .filter(({ value }) => leavesTheClone(file, value))
        .map(({ value, index }) => `${file}:${lineOf(text, index)}: ${value}`)
    })
    expect(problems).toEqual([])
  })

  it('cites only documents the repository holds (comments and test names)', () => {
    const problems = files.flatMap((file) => {
      const text = read(file)
      return citations(text).flatMap((citation) => {
        const why = missing(citation)
        return why ? [`${file}:${lineOf(text, citation.index)}: ${citation.cited}: ${why}`] : []
      })
    })
    expect([...new Set(problems)]).toEqual([])
  })

  it('flags what it should (the checks can fail)', () => {
    // Read from the working directory: inside the clone beside the file, outside from the root.
    expect(
      leavesTheClone('control-plane/lab/pii-corpus/measure-pii.ts', '../elsewhere/x.json'),
    ).toBe(true)
    expect(leavesTheClone('test/x.test.ts', '../../elsewhere')).toBe(true)
    expect(leavesTheClone('control-plane/x.ts', `${besideTheClone}elsewhere/x.md`)).toBe(true)
    expect(leavesTheClone('workers/tsconfig.json', '../shared/**/*.ts')).toBe(false)
    expect(leavesTheClone('control-plane/lab/pii-corpus/measure-pii.ts', '../../../data/pii')).toBe(
      false,
    )
    expect(leavesTheClone('shared/x.ts', '/v1/chat/completions')).toBe(false)
    const cited = citations('see gateway-notes §4, edge.md\n * §5.3 and GIE `P/x`')
    expect(cited.map((c) => [c.cited, c.doc, c.marker?.source])).toEqual([
      ['gateway-notes', 'docs/gateway-notes.md', undefined],
      ['edge.md §5.3', 'docs/edge.md', '^#+ §5\\.3(?![.\\d])'],
      ['GIE', 'docs/peer-routers.md', '^\\| \\*\\*GIE\\*\\* +\\|'],
    ])
    expect(missing({ index: 0, cited: 'x', doc: 'docs/no-such-note.md' })).not.toBeNull()
    const [benchmark] = citations('the pods of The Reference Benchmark')
    expect([benchmark?.cited, benchmark?.doc]).toEqual([
      'The Reference Benchmark',
      'docs/architecture.md',
    ])
    expect(benchmark?.marker?.test('## §7 The reference benchmark')).toBe(true)
    expect(benchmark?.marker?.test('## §7 Where it came from')).toBe(false)
  })
})
