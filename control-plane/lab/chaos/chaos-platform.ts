import { compileSnapshot } from '../../../shared/config/compile-snapshot.ts'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { KinferenceResource } from '../../../shared/crd/resource.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'

export const chaosNamespace = 'chaos'
export const chaosModel = 'qwen3.8-27b-fp8'
/** A model only Bedrock serves: requests for it test the provider path alone. */
export const chaosBedrockModel = 'claude-sonnet'
/** The Bedrock provider's per-request timeout: a stuck Bedrock is answered 503 after it. */
export const chaosBedrockTimeoutMs = 3_000

/** The ports every simulated pod listens on, each pod on its own 127.0.0.x. */
export interface ChaosPodPorts {
  http: number
  events: number
  replay: number
}

export interface ChaosTenant {
  name: string
  keyId: string
  keySha256: string
  requestsPerMinute: number
}

export interface ChaosPlatformOptions {
  ports: ChaosPodPorts
  bedrockUrl: string
  tenants: readonly ChaosTenant[]
}

const api = 'kinference.dev/v1alpha1'
const meta = (name: string) => ({ name, namespace: chaosNamespace })

/**
 * One pool of simulated pods, a Bedrock provider (the local stand-in), and a policy as a
 * platform would write it: personal data stays in the cluster and fails closed, the pool
 * bursts to Bedrock when saturated, and one model is served by Bedrock alone.
 */
export function chaosResources(options: ChaosPlatformOptions): KinferenceResource[] {
  const { ports } = options
  const documents = [
    {
      apiVersion: api,
      kind: 'InferencePool',
      metadata: meta('chaos'),
      spec: {
        selector: { matchLabels: { app: 'vllm-chaos' } },
        targetPort: ports.http,
        kvEvents: { port: ports.events, replayPort: ports.replay },
        models: [{ name: chaosModel, tokenizer: 'qwen3', maxContextTokens: 32768 }],
        gpuProfile: 'l40s-27b-fp8',
        routing: { strategy: 'kinference' },
        ttftSloMs: 2000,
      },
    },
    {
      apiVersion: api,
      kind: 'InferenceProvider',
      metadata: meta('bedrock'),
      spec: {
        type: 'Bedrock',
        bedrock: { region: 'us-east-1', endpoint: options.bedrockUrl },
        timeoutMs: chaosBedrockTimeoutMs,
        models: [
          {
            name: chaosBedrockModel,
            modelId: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
            maxOutputTokens: 4096,
          },
        ],
      },
    },
    {
      apiVersion: api,
      kind: 'GatewayBackend',
      metadata: meta('chaos-local'),
      spec: { target: { pool: { name: 'chaos', model: chaosModel } } },
    },
    {
      apiVersion: api,
      kind: 'GatewayBackend',
      metadata: meta('chaos-bedrock'),
      spec: {
        target: { provider: { name: 'bedrock', model: chaosBedrockModel } },
        relativeCost: 5,
      },
    },
    chaosPolicy(options.tenants),
  ]
  return documents.map((document) => KinferenceResource.parse(document))
}

function chaosPolicy(tenants: readonly ChaosTenant[]) {
  return {
    apiVersion: api,
    kind: 'InferencePolicy',
    metadata: meta('chaos'),
    spec: {
      tenants: tenants.map((tenant) => ({
        name: tenant.name,
        apiKeys: [{ id: tenant.keyId, sha256: tenant.keySha256 }],
        quotas: {
          requestsPerMinute: tenant.requestsPerMinute,
          // The stack's `…-closed` tenant is refused while the quota store is out; the
          // others are admitted on the edge's local bucket (the policy's default).
          failureMode: tenant.name.endsWith('-closed') ? 'FailClose' : 'FailOpen',
        },
        models: ['*'],
        // The chaos client reads the routing headers to find the pod a stream is on.
        decisionHeaders: 'Visible',
      })),
      constraints: [
        {
          name: 'pii-in-cluster',
          labels: ['pii'],
          locality: 'InCluster',
          message: 'Personal data is served by in-cluster GPUs only.',
        },
      ],
      rules: [
        {
          name: 'bedrock-on-request',
          match: { models: [chaosBedrockModel] },
          action: { route: { backends: ['chaos-bedrock'] } },
        },
        {
          name: 'local-then-bedrock',
          match: { models: [chaosModel] },
          action: { burst: { local: ['chaos-local'], external: ['chaos-bedrock'] } },
        },
      ],
    },
  }
}

export async function chaosSnapshot(options: ChaosPlatformOptions): Promise<ConfigSnapshot> {
  const compiled = await compileSnapshot(chaosResources(options), 'chaos')
  if (!compiled.ok)
    throw new KinfError(
      'invalid_config',
      `chaos config: ${compiled.issues.map((issue) => issue.message).join('; ')}`,
    )
  return compiled.snapshot
}
