import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  importClosure,
  importCycles,
  importRules,
  importViolations,
  labGateway,
  layerViolations,
} from './support/import-violations.ts'
import { sourceFiles } from './support/source-files.ts'

const read = (file: string) => readFileSync(file, 'utf8')
/** The services (what the image ships) and the lab, every TypeScript file of each. */
const sourceTree = ['shared', 'workers', 'control-plane'].flatMap(sourceFiles)

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

  it('imports point down the layers: shared/, workers/, the services, the lab', () => {
    const problems = sourceTree.flatMap((file) => layerViolations(file, read(file)))
    expect(problems).toEqual([])
  })

  it('the import graph of shared/, workers/ and control-plane/ (the lab too) has no cycle', () => {
    expect(importCycles(sourceTree, read)).toEqual([])
  })

  it('catches a service importing the lab, and shared/ importing upward', () => {
    const lab = "import { simCommand } from '../lab/commands/sim.ts'"
    const later = "const { upCommand } = await import('../lab/commands/up.ts')"
    expect(layerViolations('control-plane/kinfctl/run-kinfctl.ts', `${lab}\n${later}`)).toEqual([
      'control-plane/kinfctl/run-kinfctl.ts imports ../lab/commands/sim.ts (control-plane/ may not import control-plane/lab/)',
      'control-plane/kinfctl/run-kinfctl.ts imports ../lab/commands/up.ts (control-plane/ may not import control-plane/lab/)',
    ])
    // The gateway may load the lab on use, never import it statically.
    expect(layerViolations(labGateway, `${lab}\n${later}`)).toEqual([
      `${labGateway} imports ../lab/commands/sim.ts (control-plane/ may not import control-plane/lab/)`,
    ])
    expect(
      layerViolations(
        'shared/routing/x.ts',
        [
          "import type { App } from '../../workers/app/app.ts'",
          "import { y } from '../../control-plane/lab/sim/y.ts'",
          "import { z } from './z.ts'",
        ].join('\n'),
      ),
    ).toEqual([
      'shared/routing/x.ts imports ../../workers/app/app.ts (shared/ may not import workers/)',
      'shared/routing/x.ts imports ../../control-plane/lab/sim/y.ts (shared/ may not import control-plane/lab/)',
    ])
    expect(
      layerViolations('control-plane/edge/x.ts', "import { a } from '../../workers/app/a.ts'"),
    ).toEqual([])
    expect(
      layerViolations('control-plane/lab/sim/x.ts', "import { a } from '../../scorer/a.ts'"),
    ).toEqual([])
  })

  it('catches import cycles, type-only and dynamic imports included', () => {
    const sources: Record<string, string> = {
      'shared/a.ts': "import type { B } from './b.ts'",
      'shared/b.ts': "import { c } from './sub/c.ts'",
      'shared/sub/c.ts': "export { a } from '../a.ts'",
      'shared/d.ts': "import { a } from './a.ts'\nconst self = await import('./d.ts')",
      'shared/e.ts': "import { d } from './d.ts'",
    }
    expect(importCycles(Object.keys(sources), (file) => sources[file] ?? '')).toEqual([
      'shared/a.ts -> shared/b.ts -> shared/sub/c.ts -> shared/a.ts',
      'shared/d.ts -> shared/d.ts',
    ])
    expect(importCycles(['shared/a.ts', 'shared/b.ts'], (file) => sources[file] ?? '')).toEqual([])
  })
})
