import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { importClosure, importRules, importViolations } from './support/import-violations.ts'

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : []
  })
}

describe('import boundaries', () => {
  it.each(Object.keys(importRules))('%s/ imports only what it may', (area) => {
    const problems = sourceFiles(area).flatMap((file) =>
      importViolations(file, readFileSync(file, 'utf8'), area),
    )
    expect(problems).toEqual([])
  })

  it('the scorer loads nothing of the simulator: pool data lives in shared/', () => {
    const reached = importClosure(sourceFiles('control-plane/scorer'), (file) =>
      readFileSync(file, 'utf8'),
    )
    expect([...reached].filter((file) => file.startsWith('control-plane/lab/sim/'))).toEqual([])
    expect(reached.has('shared/routing/pool-router.ts')).toBe(true)
  })

  it('catches node:*, I/O libraries and control-plane/ imports', () => {
    const source = [
      "import { readFile } from 'node:fs/promises'",
      "import Redis from 'ioredis'",
      "import { z } from 'zod'",
      "import type { X } from '../../control-plane/scorer/x.ts'",
      "const lazy = await import('zeromq')",
      "export { y } from './y.ts'",
    ].join('\n')
    expect(importViolations('shared/config/example.ts', source, 'shared')).toEqual([
      'shared/config/example.ts imports node:fs/promises',
      'shared/config/example.ts imports ioredis',
      'shared/config/example.ts imports ../../control-plane/scorer/x.ts (control-plane/)',
      'shared/config/example.ts imports zeromq',
    ])
    expect(
      importViolations(
        'workers/routes/chat.ts',
        "import { a } from '../../shared/crd/resource.ts'",
        'workers',
      ),
    ).toEqual([])
    expect(
      importViolations(
        'workers/routes/chat.ts',
        "import { a } from '../../control-plane/a.ts'",
        'workers',
      ),
    ).toHaveLength(1)
  })
})
