import { afterAll, describe, expect, it } from 'vitest'
import { measureEdgeCpu } from '../../../../control-plane/lab/component-bench/edge/measure-edge-cpu.ts'
import { demoSnapshot } from '../../../../control-plane/lab/embedded/demo-snapshot.ts'
import { PolicyBundleCache } from '../../../../control-plane/scorer/pools/policy-bundle-cache.ts'
import { compileSnapshot } from '../../../../shared/config/compile-snapshot.ts'
import { validateResources } from '../../../../shared/config/validate-resources.ts'
import type { KinferenceResource } from '../../../../shared/crd/resource.ts'
import { noWorkloads } from '../../../../shared/kube/watched-pod.ts'
import type { Plugins } from '../../../../shared/plugins.ts'
import type { RuleMatch } from '../../../../shared/policy/conditions/builtin-conditions.ts'
import { createMemoryQuotaStore } from '../../../../shared/quota/memory-quota-store.ts'
import {
  decidedHeader,
  routeEnvelope,
  routePaths,
} from '../../../../shared/scorer-api/route-protocol.ts'
import { mintApiKey, sha256HexOf } from '../../../../shared/tenancy/api-key.ts'
import { createEdgeDeps, type EdgeRuntime } from '../../../../workers/app/create-edge-deps.ts'
import { createEdgeApp } from '../../../../workers/app/edge-app.ts'
import { policyBundleJson } from '../../../../workers/app/policy-bundles.ts'
import {
  createKvSnapshotLoader,
  type SnapshotKv,
} from '../../../../workers/worker/kv-snapshot-loader.ts'
import {
  decisionOf,
  model,
  poolSpec,
  type Stack,
  send,
  startStack,
} from '../../../support/scorer-stack.ts'
import { toyConditionPlugins, toyConditions } from '../../../support/toy-condition.ts'

// The toy condition (test/support/toy-condition.ts) where requests are decided: the edge app
// as its adapters wire it (snapshot loading, rules), the edge's benchmark, and the scorer
// reading the policy bundle of a route call. Each is started with the toy's plugins.

/** The demo platform with a first rule on the toy condition, sending its tenants to the small pool. */
const teamsFirst = (prefix: string) => (resource: KinferenceResource) => {
  if (resource.kind !== 'InferencePolicy') return
  resource.spec.rules.unshift({
    name: 'teams-first',
    // A field of the toy's, which the built-in RuleMatch type does not name.
    match: { tenantPrefix: prefix } as RuleMatch,
    action: { route: { backends: ['sim-small-local'] } },
  })
}

describe('the edge with the registry', () => {
  const key = mintApiKey((n) => crypto.getRandomValues(new Uint8Array(n)), { id: 'demo' })
  /** The demo snapshot with the toy rule, as KV would hold it. */
  const kvOf = async (prefix: string) => {
    const snapshot = await demoSnapshot(
      'http://127.0.0.1:1',
      key.id,
      await sha256HexOf(key.secret),
      teamsFirst(prefix),
      toyConditionPlugins,
    )
    return { get: async () => JSON.stringify(snapshot) }
  }

  /** The edge app as an adapter wires it, over a scorer that answers at once and notes what it was asked. */
  function edgeOn(kv: SnapshotKv, plugins?: Plugins) {
    const asked: string[] = []
    const runtime: EdgeRuntime = {
      config: createKvSnapshotLoader(kv, {
        ttlMs: 60_000,
        nowMs: () => 0,
        ...(plugins && { plugins }),
      }),
      ...(plugins && { plugins }),
      quotas: createMemoryQuotaStore(),
      scorerUrls: ['http://scorer.invalid'],
      signingSecret: 'toy-signing-secret-0123456789',
      awsCredentials: undefined,
      fetch: (async (input: string | URL | Request) => {
        asked.push(new URL(input instanceof Request ? input.url : input).pathname)
        return Response.json({
          id: 'c',
          object: 'chat.completion',
          choices: [
            { index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' },
          ],
          usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
        })
      }) as typeof fetch,
      nowMs: () => 1_800_000_000_000,
      sleep: async () => {},
      newRequestId: () => crypto.randomUUID(),
      log: () => {},
      clientAddress: () => null,
    }
    const app = createEdgeApp(createEdgeDeps(runtime))
    const chat = () =>
      app.request('/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}` },
        body: JSON.stringify({
          model: 'qwen3.8-27b-fp8',
          messages: [{ role: 'user', content: 'hello' }],
          max_tokens: 8,
        }),
      })
    return { chat, asked }
  }

  it('loads a snapshot using it and decides a request by it', async () => {
    const { chat, asked } = edgeOn(await kvOf('de'), toyConditionPlugins)
    const response = await chat()
    expect(response.status).toBe(200)
    expect(response.headers.get('x-kinference-decision')).toMatch(
      /^policy=demo\/demo; rule=teams-first; backend=demo\/sim-small-local; locality=InCluster; model=qwen3-8b/,
    )
    // Decided at the edge (no pool's status matters): the pool is sent the request itself.
    expect(asked).toEqual(['/v1/chat/completions'])
  })

  it('passes over its rule for a tenant it does not hold for: the demo rules decide', async () => {
    const { chat, asked } = edgeOn(await kvOf('team-'), toyConditionPlugins)
    expect((await chat()).status).toBe(200)
    // local-then-bedrock depends on the pool's status: a route call, the scorer deciding.
    expect(asked).toEqual(['/v1/kinference/route/chat/completions'])
  })

  it('is refused by an edge loading snapshots without it: a 500, never a rule read without its condition', async () => {
    const { chat, asked } = edgeOn(await kvOf('de'))
    const response = await chat()
    expect(response.status).toBe(500)
    expect(await response.text()).toContain('tenantPrefix')
    expect(asked).toEqual([])
  })
})

describe("the edge's benchmark with the registry", () => {
  const run = (prefix: string) =>
    measureEdgeCpu({
      promptBytes: 2048,
      requests: 10,
      seed: 1,
      patch: teamsFirst(prefix),
      plugins: toyConditionPlugins,
    })

  it('runs the edge over a policy using it, and its rule is what decides', async () => {
    const toy = await run('de')
    expect(toy.decisions).toEqual({ 'teams-first -> demo/sim-small-local': 200 })
    expect(toy.statusPools).toBe(0)
    expect(toy.scorerCallsPerRequest).toBe(1)
    // Where it does not hold, the demo's status-dependent rule decides at the scorer.
    const passed = await run('team-')
    expect(passed.decisions).toEqual({ scorer: 200 })
    expect(passed.statusPools).toBe(1)
  }, 60_000)
})

describe('a real scorer with the registry', () => {
  const meta = (name: string) => ({ name, namespace: 'test' })
  const local = (name: string) => ({
    kind: 'GatewayBackend',
    metadata: meta(name),
    spec: { target: { pool: { name: 'default', model } } },
  })
  /**
   * The stack's pool behind two backends, and a policy sending teams to both (so the pool's
   * status matters: a route call) and refusing everyone else.
   */
  async function teamsBundle(tenant: string): Promise<string> {
    const documents = [
      { kind: 'InferencePool', metadata: meta('default'), spec: poolSpec() },
      local('local'),
      local('local-too'),
      {
        kind: 'InferencePolicy',
        metadata: meta('teams'),
        spec: {
          tenants: ['team-a', 'ops'].map((name, position) => ({
            name,
            apiKeys: [{ id: `key${position}`, sha256: 'a'.repeat(64) }],
            models: ['*'],
          })),
          rules: [
            {
              name: 'teams',
              match: { tenantPrefix: 'team-' },
              action: { route: { backends: ['local', 'local-too'] } },
            },
            { name: 'everyone-else', action: { reject: { status: 402, message: 'not a team' } } },
          ],
        },
      },
    ].map((document) => ({ apiVersion: 'kinference.dev/v1alpha1', ...document }))
    const resources = validateResources(documents, 'test', toyConditions).map((check) => {
      if (check.status !== 'valid') throw new Error(JSON.stringify(check))
      return check.resource
    })
    const compiled = await compileSnapshot(resources, 'test', noWorkloads, toyConditions)
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues))
    return policyBundleJson(compiled.snapshot, tenant, toyConditions) as string
  }
  let stack: Stack | null = null
  afterAll(() => stack?.close())
  const chat = { model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 2 }
  const route = async (tenant: string) =>
    send(
      stack as Stack,
      routePaths.chat,
      routeEnvelope(await teamsBundle(tenant), JSON.stringify(chat)),
      {
        tenant,
      },
    )

  it('reads the bundle the edge sends by it: a team is served on the pool, anyone else refused', async () => {
    stack = await startStack({ pods: 1, plugins: toyConditionPlugins })
    const team = await route('team-a')
    expect(team.status).toBe(200)
    expect(decisionOf(team.headers)).toMatchObject({ rule: 'teams', pod: 'sim-pod-0' })
    const ops = await route('ops')
    expect(ops.headers.get(decidedHeader)).toBe('1')
    expect(JSON.parse(ops.text).decision).toMatchObject({ kind: 'reject', rule: 'everyone-else' })
  }, 60_000)

  it('is refused in a bundle by a scorer without it', async () => {
    const bundle = await teamsBundle('team-a')
    expect(() => new PolicyBundleCache().get(bundle)).toThrow('tenantPrefix')
    expect(new PolicyBundleCache(toyConditionPlugins).get(bundle).tenants).toEqual({
      'team-a': 'test/teams',
    })
  })
})
