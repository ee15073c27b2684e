import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { chartValuesContract } from '../../support/chart-values-contract.ts'
import { chartDir } from '../../support/helm-chart.ts'

/** The keys the Terraform kinference module sets must stay in values.yaml, with defaults. */
const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8'))
const at = (path: string) =>
  path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key], values)

describe('values.yaml keeps the keys the Terraform kinference module sets', () => {
  it.each(chartValuesContract)('%s', (path) => {
    expect(at(path), path).toBeDefined()
  })

  it('defaults vLLM to its HTTP port 8000', () => {
    expect(at('vllm.httpPort')).toBe(8000)
  })
})
