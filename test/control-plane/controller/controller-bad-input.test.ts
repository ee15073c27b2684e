import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadKubeConfig } from '../../../control-plane/controller/load-kube-config.ts'
import {
  applyObjects,
  eventually,
  kinference,
  publishedOf,
  yamlObjects,
} from '../../support/controller/controller-fixture.ts'
import { useControllerCluster } from '../../support/controller/use-controller-cluster.ts'
import type { KubeApiServer } from '../../support/kube-api-server/start-kube-api-server.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { runCli } from '../../support/run-cli.ts'

const platform = yamlObjects('infra/k8s/examples/platform.yaml')
const { uniquePrefix } = useRedisTestNamespaces()

const pool = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: kinference,
  kind: 'InferencePool',
  metadata: { name, namespace: 'kinference' },
  spec,
})
const baseSpec = structuredClone((platform[0] as unknown as { spec: Record<string, unknown> }).spec)

/**
 * The API server validates against the CRD's schema, so what reaches the controller is
 * what an older or hand-edited CRD lets through: here, one that accepts any spec.
 */
function loosenPoolSchema(server: KubeApiServer) {
  const crds = 'apiextensions.k8s.io/v1'
  const crd = server.objects.get(
    crds,
    'customresourcedefinitions',
    '',
    'inferencepools.kinference.dev',
  )
  const spec = structuredClone(crd?.spec) as {
    versions: { schema: { openAPIV3Schema: unknown } }[]
  }
  for (const version of spec.versions)
    version.schema.openAPIV3Schema = {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    }
  server.objects.update(crds, 'customresourcedefinitions', { ...crd, spec } as never)
}

describe('hostile and broken resources', () => {
  const cluster = useControllerCluster()

  it('gives each a condition naming the problem and keeps going', async () => {
    const { server } = cluster
    loosenPoolSchema(server)
    applyObjects(server, platform)
    const hostile = [
      pool('wrong-types', { ...baseSpec, targetPort: 'eighty', blockSize: -3 }),
      pool('unknown-field', {
        ...baseSpec,
        selector: { matchLabels: { app: 'x' } },
        surprise: { deep: true },
      }),
      pool('huge', {
        ...baseSpec,
        selector: { matchLabels: { app: 'y' } },
        models: Array.from({ length: 5_000 }, (_, i) => ({
          name: `m${i}`,
          tokenizer: 'qwen3',
          maxContextTokens: 10,
        })),
      }),
      pool('matches-nothing', { ...baseSpec, selector: { matchLabels: { app: 'nobody' } } }),
      pool('greedy', { ...baseSpec, selector: { matchLabels: {} } }),
      {
        apiVersion: kinference,
        kind: 'InferencePool',
        metadata: { name: 'no-spec', namespace: 'kinference' },
      },
    ]
    // creationTimestamp has whole seconds: the hostile pools are the younger ones.
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    for (const object of hostile) server.objects.create(kinference, 'inferencepools', object)
    cluster.addPod('p0', '10.3.0.1')
    cluster.putSlice('vllm-x-1', [{ name: 'p0', ip: '10.3.0.1' }])
    const c = await cluster.start(uniquePrefix())
    const condition = cluster.poolCondition
    await eventually(
      () => hostile.every((o) => condition(o.metadata.name, 'Accepted') !== undefined),
      10_000,
      'conditions on every pool',
    )
    expect(condition('wrong-types', 'Accepted')).toMatchObject({
      status: 'False',
      reason: 'Invalid',
    })
    expect(condition('wrong-types', 'Accepted')?.message).toMatch(
      /spec\.targetPort: .*; spec\.blockSize: /,
    )
    expect(condition('unknown-field', 'Accepted')?.message).toContain(
      'spec.surprise: unknown field "surprise"',
    )
    expect(condition('huge', 'Accepted')?.message).toContain('spec.models')
    expect(condition('no-spec', 'Accepted')?.message).toContain('spec: required field is missing')
    expect(condition('matches-nothing', 'Ready')).toMatchObject({
      status: 'False',
      reason: 'NoReadyEndpoints',
      message: '0 of 0 selected pods ready',
    })
    expect(condition('greedy', 'ResolvedRefs')).toMatchObject({
      status: 'False',
      reason: 'OverlappingSelector',
    })
    expect(condition('greedy', 'ResolvedRefs')?.message).toContain(
      'pod p0 also selected by InferencePool kinference/',
    )
    expect(condition('qwen-27b', 'Ready')?.status).toBe('True')
    // Status and the publish to Redis go out separately: the conditions can land first.
    const published = await eventually(() => publishedOf(c.store), 10_000, 'a published snapshot')
    expect(Object.keys(published.snapshot.pools).sort()).toEqual([
      'kinference/greedy',
      'kinference/matches-nothing',
      'kinference/qwen-27b',
      'kinference/qwen-8b',
    ])
  })

  it('fails to start with one line when the API server is missing, the kubeconfig bad, or RBAC denies', async () => {
    const { server } = cluster
    const dir = join(server.kubeconfigPath, '..')
    const nowhere = join(dir, 'nowhere.yaml')
    writeFileSync(
      nowhere,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:1\n    insecure-skip-tls-verify: true\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: t}\n`,
    )
    const garbage = join(dir, 'garbage.yaml')
    writeFileSync(garbage, 'this: [is not: a kubeconfig')
    const denied = server.writeKubeconfig({ token: 'no-rights' })
    server.forbid({ token: 'no-rights', resources: ['pods'] })
    const run = (kubeconfig: string) =>
      runCli([
        'controller',
        '--kubeconfig',
        kubeconfig,
        '--redis',
        redisUrl,
        '--redis-prefix',
        uniquePrefix(),
        '--listen',
        '127.0.0.1:0',
      ])
    const cases = [
      [nowhere, 5, /cannot reach the Kubernetes API at http:\/\/127\.0\.0\.1:1: /],
      [garbage, 1, /cannot load .*garbage\.yaml: /],
      [join(dir, 'missing.yaml'), 1, /cannot load .*missing\.yaml: /],
      [denied, 4, /denied a list the controller needs \(HTTP 403.*\); see infra\/k8s\/rbac\//],
    ] as const
    for (const [kubeconfig, code, message] of cases) {
      const result = await run(kubeconfig)
      expect(result.stderr).toMatch(message)
      expect(result.stderr.trim().split('\n')).toHaveLength(1)
      expect(result.code).toBe(code)
    }
    expect(() => loadKubeConfig({ kubeconfig: garbage, inCluster: false })).toThrow(/cannot load/)
  })
})
