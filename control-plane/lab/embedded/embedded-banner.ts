import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { evaluatePolicy } from '../../../shared/policy/evaluate-policy.ts'
import { tenantModels } from '../../../shared/policy/tenant-models.ts'
import { kinferenceHeaders } from '../../../shared/protocol/kinference-headers.ts'
import type { EmbeddedStack } from './start-embedded.ts'

/** What the banner says of the demo's models; a name not here is listed as it is. */
const modelNotes: Record<string, string> = {
  'qwen3.8-27b-fp8': 'local, bursts to Bedrock when saturated; PII stays local',
  'gpt-4o': 'alias',
  auto: 'the cheaper pool unless the big one holds the prefix',
  'claude-sonnet': 'Bedrock stand-in',
  'qwen3-embedding-0.6b': '/v1/embeddings, served by the pooling pool',
}

/**
 * The models `tenant` can actually be served: of the names its policy opens to it
 * (tenantModels), those the policy, evaluated on a one-token request with no pool status
 * known, does not refuse as unknown (model_not_found, no_matching_rule). A name only a
 * backend serves (a pool's model that no rule answers to) is not one: asking for it gets
 * 404, and the banner must not invite that.
 */
export function embeddedServedModels(snapshot: ConfigSnapshot, tenant: string): string[] {
  return tenantModels(snapshot, tenant).filter((model) => {
    const decision = evaluatePolicy(snapshot, {
      request: { tenant, model, promptTokens: 1, labels: [], detectorFailed: false },
      poolStatus: () => undefined,
    })
    return !(
      decision.kind === 'reject' &&
      (decision.code === 'no_matching_rule' || decision.code === 'model_not_found')
    )
  })
}

export interface BannerOptions {
  redisUrl: string | null
  /** The key prefix the stack uses in Redis, when not the default one. */
  redisPrefix?: string
  /** Where the snapshot was written for a Worker under wrangler dev. */
  snapshotPath: string
  /** The demo tenant, whose models are listed. */
  tenant?: string
  metricsLine: string
}

/** What `kinfctl up` (npm start) prints once the embedded default is up. */
export function embeddedBanner(stack: EmbeddedStack, options: BannerOptions): string {
  const url = stack.edge.url
  const { redisUrl } = options
  const models = embeddedServedModels(stack.snapshot, options.tenant ?? 'demo')
  const first = models.includes('qwen3.8-27b-fp8') ? 'qwen3.8-27b-fp8' : (models[0] ?? 'MODEL')
  return [
    `Kinference is up: ${stack.pods.length} simulated pods in ${Object.keys(stack.snapshot.pools).length} pools, scorer ${stack.scorer.url} (index and quotas in ${redisUrl ? 'redis' : 'memory'}), local Bedrock stand-in ${stack.bedrock.url}`,
    '',
    `  edge     ${url}/v1   (OpenAI API)`,
    `  api key  ${stack.demoKey}`,
    `  status   ${stack.statusPageUrl}   (open in a browser)`,
    `  metrics  ${options.metricsLine}`,
    '',
    `  curl -s ${url}/v1/chat/completions -H 'authorization: Bearer ${stack.demoKey}' \\`,
    `    -d '{"model":"${first}","messages":[{"role":"user","content":"Hello!"}],"max_tokens":32}'`,
    '',
    `  OPENAI_BASE_URL=${url}/v1 OPENAI_API_KEY=${stack.demoKey}   # for the openai client`,
    '',
    `Models: ${models.map((m) => (modelNotes[m] ? `${m} (${modelNotes[m]})` : m)).join(', ')}.`,
    `Labels: ${kinferenceHeaders.labels}: batch (runs only when idle). Policy: infra/k8s/demo.`,
    `The same edge in workerd: snapshot written to ${options.snapshotPath}; see README "The edge on Workers".`,
    ...inspectLines(stack, options, first),
    'Ctrl-C stops everything.',
    '',
  ].join('\n')
}

/**
 * kinfctl inspect reads Redis only. `inspect prefix` also needs the edge's signing secret
 * for the demo tenant: its prefix cache is Isolated, its blocks keyed with a cache_salt
 * derived from that secret (shared/tenancy/cache-salt.ts). Printed like the admin token
 * and the demo key, which this local stack prints too.
 */
function inspectLines(stack: EmbeddedStack, options: BannerOptions, model: string): string[] {
  const { redisUrl, redisPrefix } = options
  if (!redisUrl)
    return [
      'kinfctl inspect reads the shared state in Redis: start with REDIS_URL=redis://… to use it.',
    ]
  return [
    'The shared state is in Redis (snapshot published too): npx kinfctl inspect pods, decisions --follow, tenants, snapshot',
    `  REDIS_URL=${withoutPassword(redisUrl)} KINFERENCE_SIGNING_SECRET=${stack.signingSecret} \\`,
    `    npx kinfctl inspect prefix --tenant demo --model ${model} --messages-file messages.json${redisPrefix === undefined ? '' : ` --prefix ${redisPrefix}`}`,
    "  (messages.json: a chat's messages as a JSON array; the demo tenant is Isolated: without",
    '  --tenant and the edge signing secret above, its blocks are not counted)',
  ]
}

/** The Redis address with its password, if any, left for the reader to fill in. */
function withoutPassword(redisUrl: string): string {
  try {
    const url = new URL(redisUrl)
    if (url.password === '') return redisUrl
    url.password = 'PASSWORD'
    return url.toString()
  } catch {
    return '$REDIS_URL'
  }
}
