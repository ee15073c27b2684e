import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { importEdges } from '../../support/import-violations.ts'

/** The one module of shared/routing that code outside it imports. */
const face = 'shared/routing/pool-router.ts'
/** The strategy plugins and their registry, an extension point of their own. */
const strategies = 'shared/routing/strategies/'

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : []
  })
}

/** Imports from `file` of a module of shared/routing other than its face. */
function behindTheFace(file: string, source: string): string[] {
  return importEdges(file, source)
    .filter((edge) => edge.to.startsWith('shared/routing/'))
    .filter((edge) => edge.to !== face && !edge.to.startsWith(strategies))
    .map((edge) => `${file} imports ${edge.specifier}`)
}

describe('shared/routing', () => {
  it('is imported from outside only through pool-router.ts (its own tests aside)', () => {
    const inside = (file: string) =>
      file.startsWith('shared/routing/') || file.startsWith('test/shared/routing/')
    const outside = ['shared', 'workers', 'control-plane', 'test']
      .flatMap(sourceFiles)
      .filter((file) => !inside(file))
    expect(outside.length).toBeGreaterThan(100)
    expect(outside.flatMap((file) => behindTheFace(file, readFileSync(file, 'utf8')))).toEqual([])
  })

  it('tells an import behind the face from one through it, or of a strategy', () => {
    const file = 'control-plane/scorer/pools/example.ts'
    const source = [
      "import type { RouteResult } from '../../../shared/routing/route-result.ts'",
      "import { PoolRouter } from '../../../shared/routing/pool-router.ts'",
      "import type { StrategyRegistry } from '../../../shared/routing/strategies/define-strategy.ts'",
    ].join('\n')
    expect(behindTheFace(file, source)).toEqual([
      `${file} imports ../../../shared/routing/route-result.ts`,
    ])
  })
})
