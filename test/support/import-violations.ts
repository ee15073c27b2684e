import { dirname, relative, resolve } from 'node:path'

/**
 * The layering rule of the architecture: shared/ is pure and imports only zod and re2js
 * (pure JavaScript, the custom PII patterns' linear-time matcher);
 * workers/ imports shared/ and the edge's libraries, never control-plane/ or node:*.
 * Biome's noRestrictedImports says the same while editing; this is the check CI relies
 * on, because it resolves relative paths.
 */
export const importRules: Record<string, { folders: string[]; packages: RegExp }> = {
  shared: { folders: ['shared'], packages: /^(zod|re2js)(\/|$)/ },
  workers: {
    folders: ['shared', 'workers'],
    // cloudflare:workers: workerd's own module (the Durable Object base class, needed for RPC).
    packages: /^(zod|re2js|hono|@aws-sdk\/client-bedrock-runtime|cloudflare:workers)(\/|$)/,
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
    } else if (!rule.packages.test(specifier)) {
      problems.push(`${file} imports ${specifier}`)
    }
  }
  return problems
}

/** The module specifiers a source file imports or re-exports (static and dynamic). */
export function importSpecifiers(source: string): string[] {
  return [...source.matchAll(importPattern)].map((match) => match[1] ?? match[2] ?? match[3] ?? '')
}

/**
 * Every repository file reachable from `entries` through relative imports (static and
 * dynamic), so a rule can be checked on what a program actually loads.
 */
export function importClosure(
  entries: readonly string[],
  read: (file: string) => string,
): Set<string> {
  const seen = new Set<string>()
  const pending = [...entries]
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue
    seen.add(file)
    for (const specifier of importSpecifiers(read(file))) {
      if (specifier.startsWith('.'))
        pending.push(relative(process.cwd(), resolve(dirname(file), specifier)))
    }
  }
  return seen
}
