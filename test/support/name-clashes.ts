import { basename } from 'node:path'

/**
 * Type-like names a file exports: types, interfaces, classes, enums, and PascalCase consts
 * (the zod schemas, which share their name with the type inferred from them). Re-exports
 * (`export type { X } from`) name a declaration elsewhere and are not counted.
 */
const exportedPattern =
  /^export\s+(?:declare\s+)?(?:abstract\s+)?(?:type|interface|class|enum)\s+([A-Za-z_$][\w$]*)|^export\s+const\s+([A-Z][\w$]*[a-z][\w$]*)\b/gm

/**
 * Types, interfaces, classes and enums a file declares without exporting them: a name
 * followed by its definition, not a `type X,` line of a multi-line import.
 */
const privatePattern =
  /^[ \t]*(?:declare\s+)?(?:abstract\s+)?(?:type|interface|class|enum)\s+([A-Za-z_$][\w$]*)\s*(?:[=<{]|extends\b|implements\b)/gm

export interface DeclaredNames {
  exported: string[]
  private: string[]
}

/** The type-like names a source file declares, exported and not, each once. */
export function declaredNames(source: string): DeclaredNames {
  const exported = new Set<string>()
  for (const match of source.matchAll(exportedPattern)) exported.add(match[1] ?? match[2] ?? '')
  const hidden = new Set<string>()
  for (const match of source.matchAll(privatePattern)) {
    const name = match[1] ?? ''
    if (!exported.has(name)) hidden.add(name)
  }
  return { exported: [...exported], private: [...hidden] }
}

function groupBy(files: readonly string[], key: (file: string) => string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>()
  for (const file of files) {
    for (const name of key(file)) groups.set(name, [...(groups.get(name) ?? []), file])
  }
  return groups
}

/** Basenames more than one file has, with those files. */
export function basenameClashes(files: readonly string[]): string[] {
  return [...groupBy(files, (file) => [basename(file)])]
    .filter(([, holders]) => holders.length > 1)
    .map(([name, holders]) => `${name}: ${holders.join(', ')}`)
}

/**
 * Names two files export, and names a file declares privately that another file exports
 * (a reader meets both under one name). Private names no file exports (a local `Config`
 * in several files) are each file's own business.
 */
export function nameClashes(files: readonly string[], read: (file: string) => string): string[] {
  const declared = new Map(files.map((file) => [file, declaredNames(read(file))]))
  const exporters = groupBy(files, (file) => declared.get(file)?.exported ?? [])
  const shared = [...exporters]
    .filter(([, holders]) => holders.length > 1)
    .map(([name, holders]) => `${name} is exported by ${holders.join(', ')}`)
  const shadows = files.flatMap((file) =>
    (declared.get(file)?.private ?? []).flatMap((name) => {
      const holders = (exporters.get(name) ?? []).filter((holder) => holder !== file)
      return holders.length === 0
        ? []
        : [`${name} in ${file} shadows the export of ${holders.join(', ')}`]
    }),
  )
  return [...shared, ...shadows]
}
