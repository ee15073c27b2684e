import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { builtinStrategies } from '../../../../shared/routing/strategies/strategy-registry.ts'

/** The rows of the first table after a heading, as cells. */
function tableAfter(markdown: string, heading: string): string[][] {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => line.startsWith(heading))
  const rows: string[][] = []
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('#')) break
    if (!line.startsWith('|')) {
      if (rows.length > 0) break
      continue
    }
    rows.push(
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    )
  }
  return rows.slice(2)
}

const parameterNames = (schema: z.ZodType | undefined): string[] =>
  schema ? Object.keys((schema as unknown as z.ZodObject).shape) : []

describe('the peers’ table in docs/peer-routers.md', () => {
  const rows = tableAfter(readFileSync('docs/peer-routers.md', 'utf8'), '## §1 ')
  // kinference, the registry's first, is ours: the table is the baselines.
  const [, ...baselines] = builtinStrategies

  it('has one row per registered baseline, in the registry’s order', () => {
    expect(rows.map(([name]) => name)).toEqual(baselines.map(({ name }) => `\`${name}\``))
  })

  it.each(baselines.map((strategy) => [strategy.name, strategy] as const))(
    'names every parameter of %s',
    (name, strategy) => {
      const cell = rows.find(([row]) => row === `\`${name}\``)?.[2] ?? ''
      const named = [...cell.matchAll(/`([A-Za-z]+)`/g)].map((match) => match[1])
      const parameters = parameterNames(strategy.parameters?.schema)
      expect(named).toEqual(parameters)
      if (parameters.length === 0) expect(cell).toBe('none')
    },
  )
})
