import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { importClosure } from '../../../support/import-violations.ts'

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : []
  })
}

// The simulator stands in for vLLM: were it to tokenize or render with the router's code,
// a disagreement between the router and a real pod could never show in a test.
describe('the simulator', () => {
  it('loads nothing of the router’s tokenizer, directly or through anything it imports', () => {
    const reached = importClosure(sourceFiles('control-plane/lab/sim'), (file) =>
      readFileSync(file, 'utf8'),
    )
    expect([...reached].filter((file) => file.startsWith('control-plane/tokenizer/'))).toEqual([])
    // The walk does follow the simulator's imports into its own model.
    expect(reached.has('control-plane/lab/sim/model/create-sim-model.ts')).toBe(true)
    expect(reached.has('shared/tokens/create-stable-vocabulary.ts')).toBe(true)
  })

  it('is caught when a file of it imports the router’s tokenizer', () => {
    const files: Record<string, string> = {
      'control-plane/lab/sim/a.ts': "import { b } from './b.ts'",
      'control-plane/lab/sim/b.ts': "import type { T } from '../../tokenizer/tokenizer.ts'",
      'control-plane/tokenizer/tokenizer.ts': '',
    }
    const reached = importClosure(['control-plane/lab/sim/a.ts'], (file) => files[file] ?? '')
    expect(reached.has('control-plane/tokenizer/tokenizer.ts')).toBe(true)
  })
})
