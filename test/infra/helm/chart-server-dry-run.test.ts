import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'
import { helmPath } from '../../support/helm.ts'
import { chartDir, findManifest, parseManifests } from '../../support/helm-chart.ts'
import {
  type KubeApiServer,
  startKubeApiServer,
} from '../../support/kube-api-server/start-kube-api-server.ts'
import { runKubectl } from '../../support/kubectl.ts'
import { runBinary } from '../../support/layer-binary.ts'

/**
 * `helm install --dry-run=server` against the test API server: what `helm template` cannot
 * show. Templates' `lookup` reads the cluster, so the EPP's generated certificate is the
 * one already there on an upgrade, and a new one on a first install; and NOTES.txt is
 * rendered, with what it says to reach the edge and to name the EPP. Releases are kept in
 * Helm's memory driver: the test server does not take the protobuf bodies Helm stores
 * releases with, and a dry run stores nothing anyway.
 */
let server: KubeApiServer
let home = ''

const helm = (args: string[]) =>
  runBinary(helmPath(), args, {
    env: {
      HOME: home,
      KUBECONFIG: server.kubeconfigPath,
      HELM_DRIVER: 'memory',
      HELM_MEMORY_DRIVER_DATA: join(home, 'releases.yaml'),
    },
  })

/** The release's install as the server would get it: its manifests and its NOTES. */
async function dryRun(set: Record<string, string>) {
  const result = await helm([
    'install',
    'kinference',
    chartDir,
    '--namespace',
    'kinference',
    '--dry-run=server',
    '--skip-crds',
    ...Object.entries(set).flatMap(([key, value]) => ['--set', `${key}=${value}`]),
  ])
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
  const [head = '', notes = ''] = result.stdout.split('\nNOTES:\n')
  const manifests = parseManifests(head.slice(head.indexOf('\n---\n')))
  return { manifests, notes }
}

const epp = {
  'scorer.epp.enabled': 'true',
  'networkPolicy.gatewayFrom[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name':
    'gateway-system',
}
const certificateOf = (manifests: ReturnType<typeof parseManifests>) =>
  (
    findManifest(manifests, 'Secret', 'kinference-scorer-epp-tls') as unknown as {
      data: Record<string, string>
    }
  ).data

beforeAll(async () => {
  server = await startKubeApiServer({ namespaces: ['default', 'kinference'] })
  home = mkdtempSync(join(tmpdir(), 'kinference-helm-server-'))
  writeFileSync(join(home, 'releases.yaml'), '')
})

afterAll(async () => {
  await server?.close()
})

describe('the chart installed against the test API server (dry run on the server)', () => {
  it('generates an EPP certificate at install, and keeps the one in the cluster on an upgrade', async () => {
    const first = certificateOf((await dryRun(epp)).manifests)
    const second = certificateOf((await dryRun(epp)).manifests)
    // Nothing in the cluster yet: each install generates its own.
    expect(second['tls.crt']).not.toBe(first['tls.crt'])
    // Once the Secret exists (as after the first install), the release renders it unchanged.
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: 'kinference-scorer-epp-tls', namespace: 'kinference' },
      data: first,
    }
    const file = join(home, 'secret.yaml')
    writeFileSync(file, stringify(secret))
    const applied = await runKubectl(['apply', '-f', file], {
      kubeconfig: server.kubeconfigPath,
      home,
      timeoutMs: 30_000,
    })
    expect(applied.code, applied.stderr).toBe(0)
    expect(certificateOf((await dryRun(epp)).manifests)).toEqual(first)
  }, 60_000)

  it('says in its NOTES how to reach the edge, run helm test and name the EPP', async () => {
    const { notes } = await dryRun({ ...epp, 'edge.enabled': 'true' })
    expect(notes).toContain('kubectl port-forward -n kinference service/kinference-edge 8787:80')
    expect(notes).toContain('helm test kinference -n kinference')
    expect(notes).toContain(
      'endpointPickerRef: { name: kinference-scorer, port: { number: 9002 }, failureMode: FailOpen }',
    )
    expect(notes).toContain('infra/helm/kinference/examples/gateway-inference-pool.yaml')
    const plain = await dryRun({})
    expect(plain.notes).not.toContain('service/kinference-edge')
    expect(plain.notes).not.toContain('endpointPickerRef')
  }, 60_000)
})
