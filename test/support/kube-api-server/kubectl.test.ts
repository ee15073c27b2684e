import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type KubectlResult, runKubectl } from '../kubectl.ts'
import { type KubeApiServer, type KubeObject, startKubeApiServer } from './start-kube-api-server.ts'

const group = 'kinference.dev/v1alpha1'
const namespace = 'kinference'

let server: KubeApiServer
let dir: string

function kubectl(...args: string[]): Promise<KubectlResult> {
  return runKubectl(args, { kubeconfig: server.kubeconfigPath, home: dir })
}

function kubectlWithInput(stdin: string, ...args: string[]): Promise<KubectlResult> {
  return runKubectl(args, { kubeconfig: server.kubeconfigPath, home: dir, stdin })
}

function pool(name: string): KubeObject {
  const found = server.objects.get(group, 'inferencepools', namespace, name)
  if (!found) throw new Error(`no InferencePool ${name}`)
  return found
}

function ready(status: 'True' | 'False', generation: number) {
  return {
    type: 'Ready',
    status,
    reason: status === 'True' ? 'PodsReady' : 'NoPods',
    message: '',
    observedGeneration: generation,
    lastTransitionTime: '2026-01-01T00:00:00Z',
  }
}

/** Sets the pool's status as a controller would, through the status subresource. */
function setPoolStatus(name: string, status: Record<string, unknown>): void {
  server.objects.update(
    group,
    'inferencepools',
    { ...pool(name), status },
    { subresource: 'status' },
  )
}

beforeAll(async () => {
  server = await startKubeApiServer({ namespaces: ['default'], bookmarkIntervalMs: 200 })
  dir = mkdtempSync(join(tmpdir(), 'kubectl-home-'))
})

afterAll(async () => {
  await server?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

// kubectl validates through the server: the OpenAPI v3 served makes it send
// fieldValidation=Strict, which this server enforces with each CRD's schema.
describe('kubectl v1.33 against the in-process API server', () => {
  it('applies the CRDs, which registers their resources for discovery', async () => {
    const applied = await kubectl('apply', '-f', 'infra/k8s/crds/')
    expect(applied.stderr).toBe('')
    expect(applied.code).toBe(0)
    expect(applied.stdout).toContain(
      'customresourcedefinition.apiextensions.k8s.io/inferencepools.kinference.dev created',
    )
    const resources = await kubectl('api-resources', '--api-group=kinference.dev', '--no-headers')
    expect(resources.stdout.split('\n').filter(Boolean)).toHaveLength(5)
    expect(resources.stdout).toMatch(
      /inferencepools\s+kpool\s+kinference.dev\/v1alpha1\s+true\s+InferencePool/,
    )
    const explained = await kubectl('explain', 'inferencepool.spec.routing.strategy')
    expect(explained.code).toBe(0)
    expect(explained.stdout).toContain('round-robin')
  })

  it('applies the examples (after their namespace) and shows the printer columns', async () => {
    const ns = await kubectlWithInput(
      `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${namespace}\n`,
      'apply',
      '-f',
      '-',
    )
    expect(ns.stdout).toContain('namespace/kinference created')
    const platform = await kubectl('apply', '-f', 'infra/k8s/examples/platform.yaml')
    expect(platform.stderr).toBe('')
    expect(platform.stdout).toContain('inferencepool.kinference.dev/qwen-27b created')
    const policy = await kubectl('apply', '-f', 'infra/k8s/examples/simple-to-cheaper.yaml')
    expect(policy.stdout).toContain('inferencepolicy.kinference.dev/simple-to-cheaper created')

    setPoolStatus('qwen-27b', { readyPods: 3, saturation: 0.5, conditions: [ready('True', 1)] })
    const table = await kubectl('get', 'inferencepools', '-n', namespace)
    const [header, ...rows] = table.stdout.trim().split('\n')
    expect(header?.split(/\s{2,}/)).toEqual([
      'NAME',
      'STRATEGY',
      'PROFILE',
      'READY PODS',
      'READY',
      'AGE',
    ])
    expect(rows[0]).toMatch(/^qwen-27b\s+kinference\s+l40s-27b-fp8\s+3\s+True\s+\d+s$/)
    expect(rows[1]).toMatch(/^qwen-8b\s+kinference\s+l4-8b-bf16\s+\d+s$/)
    const wide = await kubectl('get', 'kpool', 'qwen-27b', '-n', namespace, '-o', 'wide')
    expect(wide.stdout).toMatch(/SATURATION[\s\S]*0.5/)
  })

  it('shows status conditions written through the status subresource', async () => {
    const patched = await kubectl(
      'patch',
      'inferencepolicy',
      'simple-to-cheaper',
      '-n',
      namespace,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { tenants: 1, rules: 2, conditions: [ready('True', 1)] } }),
    )
    expect(patched.stdout).toContain('patched')
    const yaml = await kubectl(
      'get',
      'inferencepolicy',
      'simple-to-cheaper',
      '-n',
      namespace,
      '-o',
      'yaml',
    )
    expect(yaml.stdout).toMatch(
      /status:\n {2}conditions:\n {2}- lastTransitionTime[\s\S]*type: Ready/,
    )
    expect(yaml.stdout).toContain('generation: 1')
    const statusPatch = server.requests.find(
      (r) => r.subresource === 'status' && r.verb === 'patch',
    )
    expect(statusPatch).toMatchObject({
      contentType: 'application/merge-patch+json',
      query: { fieldManager: 'kubectl-patch' },
    })
  })

  it('waits for condition=Ready: times out without it, returns once a controller sets it', async () => {
    const notYet = await kubectl(
      'wait',
      '--for=condition=Ready',
      'inferencepool/qwen-8b',
      '-n',
      namespace,
      '--timeout=1s',
    )
    expect(notYet.code).not.toBe(0)
    expect(notYet.stderr).toContain('timed out')

    const waiting = kubectl(
      'wait',
      '--for=condition=Ready',
      'inferencepool/qwen-8b',
      '-n',
      namespace,
      '--timeout=10s',
    )
    await new Promise((resolve) => setTimeout(resolve, 300))
    setPoolStatus('qwen-8b', { readyPods: 1, conditions: [ready('False', 1)] })
    setPoolStatus('qwen-8b', { readyPods: 2, conditions: [ready('True', 1)] })
    const done = await waiting
    expect(done.stderr).toBe('')
    expect(done.code).toBe(0)
    expect(done.stdout).toContain('inferencepool.kinference.dev/qwen-8b condition met')
  })

  it('bumps generation when apply changes the spec, and writes nothing when it does not', async () => {
    const source = readFileSync('infra/k8s/examples/platform.yaml', 'utf8')
    const changed = join(dir, 'platform-changed.yaml')
    writeFileSync(changed, source.replace('ttftSloMs: 1000', 'ttftSloMs: 800'))
    const before = pool('qwen-27b')
    const applied = await kubectl('apply', '-f', changed)
    expect(applied.stdout).toContain('inferencepool.kinference.dev/qwen-27b configured')
    expect(applied.stdout).toContain('inferencepool.kinference.dev/qwen-8b unchanged')
    const after = pool('qwen-27b')
    expect(after.metadata.generation).toBe(2)
    expect(after.status).toEqual(before.status) // a spec write keeps the status
    const again = await kubectl('apply', '-f', changed)
    expect(again.stdout).not.toContain('configured')
    expect(pool('qwen-27b').metadata.resourceVersion).toBe(after.metadata.resourceVersion)
  })

  it('rejects unknown fields under kubectl validation, prunes them with --validate=false', async () => {
    const typo = `apiVersion: ${group}\nkind: GatewayBackend\nmetadata:\n  name: typo\n  namespace: ${namespace}\nspec:\n  target:\n    pool:\n      name: qwen-8b\n      model: qwen3-8b\n  relativeCost: 1\n  relativeCots: 2\n`
    const strict = await kubectlWithInput(typo, 'apply', '-f', '-')
    expect(strict.code).not.toBe(0)
    expect(strict.stderr).toContain('unknown field "spec.relativeCots"')
    const lax = await kubectlWithInput(typo, 'apply', '--validate=false', '-f', '-')
    expect(lax.code).toBe(0)
    const stored = server.objects.get(group, 'gatewaybackends', namespace, 'typo')
    expect(stored?.spec).toEqual({
      target: { pool: { name: 'qwen-8b', model: 'qwen3-8b' } },
      relativeCost: 1,
    })
  })

  it('applies server-side', async () => {
    const applied = await kubectl(
      'apply',
      '--server-side',
      '-f',
      'infra/k8s/examples/burst-to-bedrock.yaml',
    )
    expect(applied.stderr).toBe('')
    expect(applied.stdout).toContain(
      'inferencepolicy.kinference.dev/burst-to-bedrock serverside-applied',
    )
    const policy = server.objects.get(group, 'inferencepolicies', namespace, 'burst-to-bedrock')
    expect(policy?.metadata.managedFields).toMatchObject([
      { manager: 'kubectl', operation: 'Apply' },
    ])
    const reapplied = await kubectl(
      'apply',
      '--server-side',
      '-f',
      'infra/k8s/examples/burst-to-bedrock.yaml',
    )
    expect(reapplied.code).toBe(0)
  })

  it('deletes, waiting until the object is gone; finalizers hold it until removed', async () => {
    const deleted = await kubectl('delete', 'inferencepool', 'qwen-8b', '-n', namespace)
    expect(deleted.stdout).toContain('inferencepool.kinference.dev "qwen-8b" deleted')
    expect(server.objects.get(group, 'inferencepools', namespace, 'qwen-8b')).toBeUndefined()

    const finalized = { ...pool('qwen-27b') }
    finalized.metadata = { ...finalized.metadata, finalizers: ['kinference.dev/cleanup'] }
    server.objects.update(group, 'inferencepools', finalized)
    const marked = await kubectl(
      'delete',
      'inferencepool',
      'qwen-27b',
      '-n',
      namespace,
      '--wait=false',
    )
    expect(marked.code).toBe(0)
    expect(pool('qwen-27b').metadata.deletionTimestamp).toMatch(/Z$/)
    const released = await kubectl(
      'patch',
      'inferencepool',
      'qwen-27b',
      '-n',
      namespace,
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":null}}',
    )
    expect(released.code).toBe(0)
    expect(server.objects.get(group, 'inferencepools', namespace, 'qwen-27b')).toBeUndefined()
  })

  it('reports 403 Forbidden (kubectl is anonymous over plain HTTP)', async () => {
    const allow = server.forbid({
      token: 'system:anonymous',
      verbs: ['list'],
      resources: ['gatewaybackends'],
    })
    const denied = await kubectl('get', 'gatewaybackends', '-n', namespace)
    allow()
    expect(denied.code).not.toBe(0)
    expect(denied.stderr).toContain('Error from server (Forbidden)')
    expect(denied.stderr).toContain('cannot list resource "gatewaybackends"')
  })
})
