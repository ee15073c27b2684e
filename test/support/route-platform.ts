import type { EdgeClaims } from '../../shared/auth/edge-signature.ts'
import { compileSnapshot } from '../../shared/config/compile-snapshot.ts'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { KinferenceResource } from '../../shared/crd/resource.ts'
import { policyBundleOf } from '../../shared/policy/policy-bundle.ts'
import { routeEnvelope, routePaths } from '../../shared/scorer-api/route-protocol.ts'
import { model, poolSpec, type Stack, send } from './scorer-stack.ts'

const meta = (name: string) => ({ name, namespace: 'test' })
const key = { id: 'acme01', sha256: 'a'.repeat(64) }

/**
 * A platform around the scorer stack's pool "default" for tenant acme (key
 * `acme01`/`'a' × 64`): the stack's model local first, Bedrock's claude when saturated; a
 * PII constraint to stay in cluster, and the model "nope" refused.
 */
export async function burstPlatform(): Promise<ConfigSnapshot> {
  const documents = [
    { kind: 'InferencePool', metadata: meta('default'), spec: poolSpec() },
    {
      kind: 'GatewayBackend',
      metadata: meta('local'),
      spec: { target: { pool: { name: 'default', model } } },
    },
    {
      kind: 'InferenceProvider',
      metadata: meta('bedrock'),
      spec: {
        type: 'Bedrock',
        bedrock: { region: 'us-east-1' },
        models: [{ name: 'claude', modelId: 'anthropic.claude' }],
      },
    },
    {
      kind: 'GatewayBackend',
      metadata: meta('claude'),
      spec: { target: { provider: { name: 'bedrock', model: 'claude' } } },
    },
    {
      kind: 'InferencePolicy',
      metadata: meta('policy'),
      spec: {
        tenants: [{ name: 'acme', apiKeys: [key], models: ['*'] }],
        constraints: [{ name: 'pii-local', labels: ['pii'], locality: 'InCluster' }],
        rules: [
          {
            name: 'refused',
            match: { models: ['nope'] },
            action: { reject: { status: 403, message: 'no' } },
          },
          {
            name: 'burst',
            match: { models: [model] },
            action: { burst: { local: ['local'], external: ['claude'] } },
          },
        ],
      },
    },
  ].map((document) =>
    KinferenceResource.parse({ apiVersion: 'kinference.dev/v1alpha1', ...document }),
  )
  const compiled = await compileSnapshot(documents, 'test')
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues))
  return compiled.snapshot
}

/**
 * POST /v1/kinference/route as the edge calls it for acme, signed: the platform's policy
 * bundle for acme (or `bundle`, any text) and the request `body` as its own JSON text.
 */
export async function routeOnPlatform(
  stack: Stack,
  body: object | string,
  claims: Partial<EdgeClaims> = {},
  bundle?: string,
) {
  const json = bundle ?? JSON.stringify(policyBundleOf(await burstPlatform(), 'acme'))
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  return send(stack, routePaths.chat, routeEnvelope(json, text), { tenant: 'acme', ...claims })
}
