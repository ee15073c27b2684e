import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { runHelm } from './helm.ts'
import type { BinaryResult } from './layer-binary.ts'
import type { Container, Deployment } from './manifest-types.ts'

export const chartDir = 'infra/helm/kinference'
/** The example values files `helm lint`/`template` are run with (chart-testing's convention). */
export const ciValuesFiles = readdirSync(join(chartDir, 'ci'))
  .filter((name) => name.endsWith('.yaml'))
  .sort()
  .map((name) => join(chartDir, 'ci', name))

/** The values the chart is rendered with in tests: its defaults, then each ci/*.yaml. */
export const chartVariants: { name: string; options: RenderOptions }[] = [
  { name: 'default values', options: {} },
  ...ciValuesFiles.map((file) => ({ name: file, options: { valuesFile: file } })),
]

/** A rendered manifest; the fields the tests read are typed in manifest-types.ts. */
export interface Manifest {
  apiVersion: string
  kind: string
  metadata: { name: string; namespace?: string; labels?: Record<string, string> }
  spec?: unknown
  rules?: unknown
  roleRef?: unknown
  subjects?: unknown
}

export interface RenderOptions {
  valuesFile?: string
  /** `--set` values: numbers and booleans keep their types. */
  set?: Record<string, string | number>
  release?: string
  namespace?: string
}

function valueArgs(options: RenderOptions): string[] {
  return [
    ...(options.valuesFile ? ['-f', options.valuesFile] : []),
    ...Object.entries(options.set ?? {}).flatMap(([key, value]) => ['--set', `${key}=${value}`]),
  ]
}

/** `helm template` of the chart, with the namespace the release is installed in. */
export function templateChart(options: RenderOptions = {}): Promise<BinaryResult> {
  return runHelm([
    'template',
    options.release ?? 'kinference',
    chartDir,
    '--namespace',
    options.namespace ?? 'kinference',
    '--kube-version',
    '1.33.0',
    ...valueArgs(options),
  ])
}

export function lintChart(options: RenderOptions = {}): Promise<BinaryResult> {
  return runHelm(['lint', '--strict', chartDir, '--kube-version', '1.33.0', ...valueArgs(options)])
}

/** Renders the chart and parses every manifest; throws with helm's message when it fails. */
export async function renderChart(options: RenderOptions = {}): Promise<Manifest[]> {
  const result = await templateChart(options)
  if (result.code !== 0) throw new Error(`helm template failed: ${result.stderr}`)
  return parseManifests(result.stdout)
}

export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((document) => {
      if (document.errors.length > 0) throw new Error(document.errors[0]?.message)
      return document.toJS() as Manifest | null
    })
    .filter((manifest): manifest is Manifest => manifest !== null)
}

export function findManifest(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name)
  if (!found) {
    const have = manifests.map((m) => `${m.kind}/${m.metadata.name}`).join(', ')
    throw new Error(`no ${kind}/${name} among ${have}`)
  }
  return found
}

/** The containers of a Deployment's pod template (init containers included). */
export function containersOf(workload: Manifest): Container[] {
  const pod = (workload as Deployment).spec.template.spec
  return [...(pod.initContainers ?? []), ...pod.containers]
}

/**
 * A container's args as the kubelet passes them: `$(VAR)` becomes the value of an env var
 * the container defines, `$$` stays a literal `$`, anything unknown is left as written.
 */
export function expandArgs(args: string[], env: Record<string, string>): string[] {
  return args.map((arg) =>
    arg.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name?: string) =>
      name === undefined ? '$' : (env[name] ?? whole),
    ),
  )
}
