import { dirname, relative, resolve } from 'node:path'

/**
 * The layering rule of the architecture: shared/ is pure and imports only zod, re2js (pure
 * JavaScript, the custom PII patterns' linear-time matcher) and OpenTelemetry's API (the
 * tracing port: interfaces and no-ops, no SDK, no exporter);
 * workers/ imports shared/ and the edge's libraries, never control-plane/ or node:*; the
 * Worker entry (workers/worker/) also the OpenTelemetry SDK's tracer provider and its OTLP
 * serializer, which run in workerd (test/workers/worker/worker-tracing.workers.test.ts),
 * to export the edge's spans with fetch (workers/worker/worker-tracing.ts); the SDK's
 * exporters, which batch on timers a Worker does not keep between requests, stay out. Biome's noRestrictedImports says the same while
 * editing; this is the check CI relies on, because it resolves relative paths.
 */
export const importRules: Record<
  string,
  { folders: string[]; packages: RegExp; alsoUnder?: { folder: string; packages: RegExp } }
> = {
  shared: { folders: ['shared'], packages: /^(zod|re2js|@opentelemetry\/api)(\/|$)/ },
  workers: {
    folders: ['shared', 'workers'],
    // cloudflare:workers: workerd's own module (the Durable Object base class, needed for RPC).
    packages:
      /^(zod|re2js|hono|@aws-sdk\/client-bedrock-runtime|@opentelemetry\/api|cloudflare:workers)(\/|$)/,
    alsoUnder: {
      folder: 'workers/worker/',
      packages: /^@opentelemetry\/(sdk-trace|resources|otlp-transformer)(\/|$)/,
    },
  },
}

const importPattern =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm

export function importViolations(
  file: string,
  source: string,
  area: keyof typeof importRules,
): string[] {
  const rule = importRules[area]
  if (!rule) return []
  const problems: string[] = []
  for (const match of source.matchAll(importPattern)) {
    const specifier = match[1] ?? match[2] ?? match[3] ?? ''
    if (specifier.startsWith('.')) {
      const target = relative(process.cwd(), resolve(dirname(file), specifier))
      const top = target.split(/[\\/]/)[0] ?? ''
      if (!rule.folders.includes(top)) problems.push(`${file} imports ${specifier} (${top}/)`)
    } else if (!rule.packages.test(specifier) && !alsoAllowed(rule.alsoUnder, file, specifier)) {
      problems.push(`${file} imports ${specifier}`)
    }
  }
  return problems
}

function alsoAllowed(
  extra: { folder: string; packages: RegExp } | undefined,
  file: string,
  specifier: string,
): boolean {
  return extra !== undefined && file.startsWith(extra.folder) && extra.packages.test(specifier)
}

/** The module specifiers a source file imports or re-exports (static and dynamic). */
export function importSpecifiers(source: string): string[] {
  return [...source.matchAll(importPattern)].map((match) => match[1] ?? match[2] ?? match[3] ?? '')
}

/**
 * Every repository file reachable from `entries` through relative imports (static and
 * dynamic, or those `follow` keeps), so a rule can be checked on what a program loads.
 */
export function importClosure(
  entries: readonly string[],
  read: (file: string) => string,
  follow: (edge: ImportEdge) => boolean = () => true,
): Set<string> {
  const seen = new Set<string>()
  const pending = [...entries]
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue
    seen.add(file)
    for (const edge of importEdges(file, read(file))) if (follow(edge)) pending.push(edge.to)
  }
  return seen
}

/**
 * The lab: the simulator, the benchmarks, the chaos suite and the other tools a clone has
 * and the image does not (the Dockerfile leaves control-plane/lab/ out).
 */
export const labFolder = 'control-plane/lab/'

/**
 * The one service file that may name the lab, and only by dynamic import: kinfctl's lab
 * commands (bench, sim, up), loaded on use, so the image runs every other command.
 */
export const labGateway = 'control-plane/kinfctl/lab-commands.ts'

/**
 * The layers, lowest first: shared/ (pure), workers/ (the edge), the services of
 * control-plane/, the lab. An import points down or sideways, never up.
 */
const layers = ['shared/', 'workers/', 'control-plane/', labFolder] as const

function layerOf(file: string): number {
  const normalized = file.replaceAll('\\', '/')
  for (let layer = layers.length - 1; layer >= 0; layer--)
    if (normalized.startsWith(layers[layer] ?? '')) return layer
  return -1
}

export interface ImportEdge {
  /** The importing file, relative to the repository. */
  from: string
  /** The imported file, relative to the repository. */
  to: string
  specifier: string
  /** import('...'), which loads its target only when the code runs. */
  dynamic: boolean
}

/** The relative imports of a file (static, dynamic and type-only), resolved. */
export function importEdges(file: string, source: string): ImportEdge[] {
  return [...source.matchAll(importPattern)].flatMap((match) => {
    const specifier = match[1] ?? match[2] ?? match[3] ?? ''
    if (!specifier.startsWith('.')) return []
    const to = relative(process.cwd(), resolve(dirname(file), specifier))
    return [{ from: file, to, specifier, dynamic: match[2] !== undefined }]
  })
}

/**
 * Imports that point up the layers: shared/ importing workers/ or control-plane/, the
 * edge importing control-plane/, a service importing the lab (but the lab gateway's
 * dynamic imports).
 */
export function layerViolations(file: string, source: string): string[] {
  const from = layerOf(file)
  if (from < 0) return []
  return importEdges(file, source).flatMap((edge) => {
    const to = layerOf(edge.to)
    if (to <= from) return []
    if (edge.dynamic && file === labGateway && to === layers.indexOf(labFolder)) return []
    return [`${file} imports ${edge.specifier} (${layers[from]} may not import ${layers[to]})`]
  })
}

/**
 * The cycles of the import graph among `files`, one per strongly connected component
 * (Tarjan's algorithm), each spelled as a path from its first file back to it.
 */
export function importCycles(files: readonly string[], read: (file: string) => string): string[] {
  const known = new Set(files)
  const graph = new Map(
    files.map((file) => [
      file,
      [...new Set(importEdges(file, read(file)).map((edge) => edge.to))].filter((to) =>
        known.has(to),
      ),
    ]),
  )
  return stronglyConnected(graph)
    .filter(
      (members) => members.length > 1 || graph.get(members[0] ?? '')?.includes(members[0] ?? ''),
    )
    .map((members) => cyclePath(graph, new Set(members)).join(' -> '))
    .sort()
}

function stronglyConnected(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const visit = (file: string) => {
    index.set(file, index.size)
    low.set(file, index.get(file) ?? 0)
    stack.push(file)
    onStack.add(file)
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) visit(next)
      if (onStack.has(next))
        low.set(file, Math.min(low.get(file) ?? 0, low.get(next) ?? 0, index.get(next) ?? 0))
    }
    if (low.get(file) !== index.get(file)) return
    const component: string[] = []
    for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
      onStack.delete(top)
      component.push(top)
      if (top === file) break
    }
    components.push(component.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return components
}

/** A shortest path from the component's first file back to it, through the component. */
function cyclePath(graph: ReadonlyMap<string, readonly string[]>, members: Set<string>): string[] {
  const start = [...members][0] ?? ''
  const previous = new Map<string, string>()
  const queue = [start]
  for (let at = 0; at < queue.length; at++) {
    const file = queue[at] ?? ''
    for (const next of graph.get(file) ?? []) {
      if (!members.has(next)) continue
      if (next === start) {
        const path = [file]
        for (let step = previous.get(file); step !== undefined; step = previous.get(step))
          path.unshift(step)
        return [...path, start]
      }
      if (!previous.has(next) && next !== start) {
        previous.set(next, file)
        queue.push(next)
      }
    }
  }
  return [start, start]
}
