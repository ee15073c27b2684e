import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { labFolder } from './support/import-violations.ts'
import { basenameClashes, declaredNames, nameClashes } from './support/name-clashes.ts'
import { sourceFiles } from './support/source-files.ts'

const read = (file: string) => readFileSync(file, 'utf8')
/** The services (what the image ships): the lab may reuse their names. */
const services = ['shared', 'workers', 'control-plane']
  .flatMap(sourceFiles)
  .filter((file) => !file.startsWith(labFolder))

describe('one name, one thing, across the services', () => {
  it('no two service files share a basename', () => {
    expect(services.length).toBeGreaterThan(100)
    expect(basenameClashes(services)).toEqual([])
  })

  it('no two service files export a type, class or schema of one name, and none shadows one', () => {
    expect(nameClashes(services, read)).toEqual([])
  })

  it('reads the names a file declares, exported and private', () => {
    const source = [
      'export const PodView = z.object({})',
      'export type PodView = z.infer<typeof PodView>',
      'export interface Lease {}',
      'export abstract class Store {}',
      'export const maxPods = 16',
      'export const QUEUE_LIMIT = 4',
      'import {',
      '  type Imported,',
      "} from './imported.ts'",
      "export type { Elsewhere } from './elsewhere.ts'",
      'interface Config {}',
      'function f() {',
      '  type Local = string',
      '  class Inner extends Base {}',
      '}',
      ' * type of the thing, in a comment',
    ].join('\n')
    expect(declaredNames(source)).toEqual({
      exported: ['PodView', 'Lease', 'Store'],
      private: ['Config', 'Local', 'Inner'],
    })
  })

  it('catches shared basenames, shared exports and private shadows, and allows private twins', () => {
    expect(basenameClashes(['shared/a/view.ts', 'workers/b/view.ts', 'shared/a/other.ts'])).toEqual(
      ['view.ts: shared/a/view.ts, workers/b/view.ts'],
    )
    const sources: Record<string, string> = {
      'shared/state/pod-state.ts': 'export const PodView = z.object({})',
      'control-plane/status/view.ts': 'export type PodView = { name: string }\ntype Config = {}',
      'shared/routing/sticky.ts': 'interface PodView { hit: number }\ninterface Config {}',
      'workers/app/stage.ts': "export type { PodView } from '../../shared/state/pod-state.ts'",
    }
    expect(nameClashes(Object.keys(sources), (file) => sources[file] ?? '')).toEqual([
      'PodView is exported by shared/state/pod-state.ts, control-plane/status/view.ts',
      'PodView in shared/routing/sticky.ts shadows the export of shared/state/pod-state.ts, control-plane/status/view.ts',
    ])
  })
})
