import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { checkTerraformTree } from '../../../../control-plane/lab/terraform-check/check-terraform-tree.ts'
import { loadTerraformModule } from '../../../../control-plane/lab/terraform-check/load-terraform-module.ts'
import { chartValuesContract } from '../../../support/chart-values-contract.ts'
import { schemaDir } from './broken-terraform.ts'

const modulesDir = 'infra/terraform/modules'
const example = 'infra/terraform/environments/example'

/** Every key path of an object: { a: { b: 1 } } -> ["a", "a.b"]. */
function keyPaths(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return []
  return Object.entries(value).flatMap(([key, inner]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`
    return [path, ...keyPaths(inner, path)]
  })
}

describe('the Terraform tree is wired together', () => {
  it('uses every module under modules/ from the example environment', async () => {
    const { calls, modules } = await checkTerraformTree('infra/terraform', { schemaDir })
    const reached = new Set<string>()
    const pending = [example]
    for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
      if (reached.has(dir)) continue
      reached.add(dir)
      pending.push(...(calls.get(dir) ?? []))
    }
    const library = modules.filter((dir) => dir.startsWith(`${modulesDir}/`))
    expect(library.length).toBeGreaterThanOrEqual(5)
    expect(library.filter((dir) => !reached.has(dir))).toEqual([])
  })

  // The chart's side of the contract is test/infra/helm/values-contract.test.ts.
  it('sets exactly the chart values of the contract', async () => {
    const { module } = await loadTerraformModule(`${modulesDir}/kinference`)
    const set = module.locals.get('values')?.body.value
    // networkPolicy is a merge() (null keeps the chart's default peers): its keys are in the text.
    const networkPolicy = JSON.stringify((set as Record<string, unknown>)?.networkPolicy)
    const paths = [
      ...keyPaths(set),
      ...['enabled', 'scorerIngressFrom']
        .filter((key) => networkPolicy.includes(`${key} =`))
        .map((key) => `networkPolicy.${key}`),
    ]
    const leaves = paths.filter((path) => !paths.some((other) => other.startsWith(`${path}.`)))
    expect(leaves.sort()).toEqual([...chartValuesContract].sort())
  })

  it('installs the chart in the repository', async () => {
    const { module } = await loadTerraformModule(`${modulesDir}/kinference`)
    const chart = String(module.locals.get('chart_path')?.body.value)
    expect(chart).toMatch(/^\$\{path\.module\}\//)
    const dir = chart.replace(/^\$\{path\.module\}/, `${modulesDir}/kinference`)
    expect(await readFile(`${dir}/Chart.yaml`, 'utf8')).toMatch(/^name: kinference$/m)
  })

  it('gives the Worker the bindings, date, flags and migration wrangler.toml declares', async () => {
    const wrangler = await readFile('wrangler.toml', 'utf8')
    const { module } = await loadTerraformModule(`${modulesDir}/edge-cloudflare`)
    const local = (name: string) => module.locals.get(name)?.body.value
    const quoted = (key: string) => new RegExp(`^${key}\\s*=\\s*"([^"]+)"`, 'm').exec(wrangler)?.[1]
    expect(local('compatibility_date')).toBe(quoted('compatibility_date'))
    expect(wrangler).toContain(
      `compatibility_flags = ${JSON.stringify(local('compatibility_flags'))}`,
    )
    expect(wrangler).toMatch(new RegExp(`binding = "${local('config_binding')}"`))
    expect(wrangler).toMatch(
      new RegExp(`name = "${local('quota_binding')}"\\nclass_name = "${local('quota_class')}"`),
    )
    expect(quoted('tag')).toBe(local('migration_tag'))
    expect(wrangler).toContain(`new_sqlite_classes = ["${local('quota_class')}"]`)
    expect(quoted('name')).toBe(module.variables.get('script_name')?.body.default)
  })
})
