import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'
import { loadTerraformModule } from '../../../control-plane/lab/terraform-check/load-terraform-module.ts'
import { chartDir, containersOf, findManifest, renderChart } from '../../support/helm-chart.ts'
import type { Deployment } from '../../support/manifest-types.ts'

/**
 * The kinference module passes scorer.tokenizers to the chart: its variable's snake_case
 * attributes become the chart's keys, unset ones left out. There is no Terraform binary
 * here, so the test reads the module with HashiCorp's HCL parser, takes the mapping its
 * for expression writes, applies it to entries of every kind, and renders the chart with
 * the result through the real Helm.
 */

const moduleDir = 'infra/terraform/modules/kinference'
const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8'))
const mountSchema = schema.definitions.tokenizerMount as {
  properties: Record<string, { required?: string[] }>
}

type Entry = Record<string, string | null>
interface Mapping {
  key: string
  attribute: string
  /** The key of the object the attribute is wrapped in (a source's own field), if any. */
  wrappedIn?: string
}

let mapping: Mapping[] = []
let variableType = ''

beforeAll(async () => {
  const { module } = await loadTerraformModule(moduleDir)
  const values = module.locals.get('values')?.body.value as { scorer: { tokenizers: string } }
  const expression = values.scorer.tokenizers
  mapping = [
    ...expression.matchAll(/^\s*(\w+)\s+=\s+t\.(\w+)\s*$/gm),
    ...expression.matchAll(/^\s*(\w+)\s+=\s+t\.(\w+) == null \? null : \{ (\w+) = t\.\2 \}/gm),
  ].map(([, key, attribute, wrappedIn]) => ({
    key: key ?? '',
    attribute: attribute ?? '',
    ...(wrappedIn !== undefined && { wrappedIn }),
  }))
  variableType = String(module.variables.get('scorer')?.body.type)
})

/** What the module's for expression makes of one entry. */
function toChartValues(entry: Entry): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const { key, attribute, wrappedIn } of mapping) {
    const value = entry[attribute] ?? null
    if (value === null) continue
    out[key] = wrappedIn === undefined ? value : { [wrappedIn]: value }
  }
  return out
}

describe('the Terraform kinference module’s scorer.tokenizers', () => {
  it('maps every key of the chart’s tokenizer mount from an attribute its variable declares', () => {
    expect(mapping.map((m) => m.key).sort()).toEqual(Object.keys(mountSchema.properties).sort())
    for (const { attribute } of mapping)
      expect(variableType).toMatch(new RegExp(`\\b${attribute}\\s+=\\s+(optional\\()?string`))
    // Each source is wrapped in the object the chart's schema requires of it.
    for (const { key, wrappedIn } of mapping.filter((m) => m.wrappedIn !== undefined))
      expect(mountSchema.properties[key]?.required).toEqual([wrappedIn])
  })

  it('gives the chart values it renders into the scorer’s volumes and read-only mounts', async () => {
    const entries: Entry[] = [
      {
        name: 'llama',
        persistent_volume_claim: 'hf-cache',
        sub_path: 'hub/models--meta-llama--Llama-3.1-8B-Instruct',
      },
      { name: 'tiny', config_map: 'tiny-tokenizer', mount_path: null },
      { name: 'gemma', host_path: '/mnt/models/gemma', mount_path: '/models/gemma' },
    ]
    const file = join(mkdtempSync(join(tmpdir(), 'kinference-tf-values-')), 'values.yaml')
    writeFileSync(file, stringify({ scorer: { tokenizers: entries.map(toChartValues) } }))
    const manifests = await renderChart({ valuesFile: file })
    const scorer = findManifest(manifests, 'Deployment', 'kinference-scorer')
    const volumes = (scorer as unknown as Deployment).spec.template.spec.volumes ?? []
    expect(volumes.filter((v) => v.name.startsWith('tokenizer-'))).toEqual([
      { name: 'tokenizer-llama', persistentVolumeClaim: { claimName: 'hf-cache', readOnly: true } },
      { name: 'tokenizer-tiny', configMap: { name: 'tiny-tokenizer' } },
      { name: 'tokenizer-gemma', hostPath: { path: '/mnt/models/gemma', type: 'Directory' } },
    ])
    const mounts = containersOf(scorer)[0]?.volumeMounts ?? []
    expect(mounts.filter((m) => m.name.startsWith('tokenizer-'))).toEqual([
      {
        name: 'tokenizer-llama',
        mountPath: '/tokenizers/llama',
        readOnly: true,
        subPath: 'hub/models--meta-llama--Llama-3.1-8B-Instruct',
      },
      { name: 'tokenizer-tiny', mountPath: '/tokenizers/tiny', readOnly: true },
      { name: 'tokenizer-gemma', mountPath: '/models/gemma', readOnly: true },
    ])
  })

  it('defaults to none, and refuses an entry without exactly one source', async () => {
    expect(variableType).toMatch(/tokenizers\s+=\s+optional\(list\(object\([\s\S]*\)\), \[\]\)/)
    const { module } = await loadTerraformModule(moduleDir)
    const validations = module.variables.get('scorer')?.body.validation as {
      condition: string
      error_message: string
    }[]
    const check = validations.find((v) => v.condition.includes('var.scorer.tokenizers'))
    for (const source of ['config_map', 'persistent_volume_claim', 'host_path'])
      expect(check?.condition).toContain(`t.${source}`)
    expect(check?.condition).toMatch(/== 1\s*\]\)/)
    expect(check?.error_message).toContain('exactly one')
  })
})
