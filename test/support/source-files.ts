import { readdirSync } from 'node:fs'
import { join } from 'node:path'

/** Every TypeScript source file below `folder` (declaration files aside), by relative path. */
export function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : []
  })
}
