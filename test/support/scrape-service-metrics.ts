import type { EmbeddedStack } from '../../control-plane/lab/embedded/start-embedded.ts'
import type { KinferenceResource } from '../../shared/crd/resource.ts'
import {
  applyObjects,
  eventually,
  startInProcessController,
  startTestCluster,
  yamlObjects,
} from './controller/controller-fixture.ts'
import { card, post, saturatedPool, start } from './embedded-stack.ts'
import { redisUrl } from './redis-test-namespaces.ts'

/** One /metrics body, as a service served it. */
export interface ScrapedMetrics {
  /** Which service, and under what traffic. */
  service: string
  url: string
  text: string
}

const model = 'qwen3.8-27b-fp8'

/**
 * Every kind of /metrics endpoint the project serves, scraped after real traffic: the
 * embedded default's edge, scorer and a simulated vLLM pod (plain, streamed and PII
 * requests), the same with every pod over its SLO and a quota of 4 requests a minute
 * (bursts, PII kept local, deferred work, a quota refusal), and the controller after reconciling infra/k8s/examples/platform.yaml against
 * the test API server (test/support/kube-api-server), publishing to Redis.
 */
export async function scrapeServiceMetrics(options: {
  /** The controller's Redis key prefix (useRedisTestNamespaces deletes its keys). */
  redisPrefix: string
}): Promise<ScrapedMetrics[]> {
  const scraped: ScrapedMetrics[] = []
  const scrape = async (service: string, base: string | null) => {
    const url = `${base}/metrics`
    const response = await fetch(url)
    if (!response.ok) throw new Error(`${service}: GET ${url} answered ${response.status}`)
    scraped.push({ service, url, text: await response.text() })
  }

  const stack = await start()
  try {
    await sendTraffic(stack)
    await scrape('edge', stack.edge.metricsUrl)
    await scrape('scorer', stack.scorer.metricsUrl)
    // A pod the traffic reached (the router chooses which): its counters have samples.
    const pods = await Promise.all(
      stack.pods.map(async (pod) => (await fetch(`${pod.url}/metrics`)).text()),
    )
    const served = stack.pods[Math.max(0, pods.findIndex(servedRequests))]
    if (!served) throw new Error('the embedded default started no pods')
    await scrape('simulated vLLM pod', served.url)
  } finally {
    await stack.close()
  }

  const saturated = await start({ patch: saturatedWithQuota })
  try {
    await sendTraffic(saturated)
    await post(
      saturated,
      { model, messages: [{ role: 'user', content: 'batch' }] },
      {
        'x-kinference-labels': 'batch',
      },
    ).then((response) => response.text())
    // The fifth request of the minute: over the tenant's quota.
    await post(saturated, { model, messages: [{ role: 'user', content: 'one more' }] }).then(
      (response) => response.text(),
    )
    await scrape('edge, pool saturated', saturated.edge.metricsUrl)
    await scrape('scorer, pool saturated', saturated.scorer.metricsUrl)
  } finally {
    await saturated.close()
  }

  const cluster = await startTestCluster()
  const controller = await startInProcessController(cluster, {
    url: redisUrl,
    prefix: options.redisPrefix,
  })
  try {
    applyObjects(cluster, yamlObjects('infra/k8s/examples/platform.yaml'))
    await eventually(
      () =>
        /kinference_controller_reconciles_total\{result="ok"\}/.test(
          controller.controller.metrics.registry.render(),
        ),
      10_000,
      'a successful reconcile',
    )
    await scrape('controller', controller.controller.url)
  } finally {
    await controller.close()
    await cluster.close()
  }
  return scraped
}

/** saturatedPool, and a tenant quota of 4 requests a minute. */
function saturatedWithQuota(resource: KinferenceResource): void {
  saturatedPool(resource)
  if (resource.kind === 'InferencePolicy')
    for (const tenant of resource.spec.tenants)
      tenant.quotas = { requestsPerMinute: 4, failureMode: 'FailOpen' }
}

/** Plain, streamed and PII-labelled chat requests through the edge, read to the end. */
async function sendTraffic(stack: EmbeddedStack): Promise<void> {
  const bodies = [
    { model, messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 8 },
    { model, messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 8, stream: true },
    { model, messages: [{ role: 'user', content: card }], max_tokens: 8 },
  ]
  for (const body of bodies) await (await post(stack, body)).text()
}

/** An exposition whose vllm:request_success_total counted a request. */
function servedRequests(text: string): boolean {
  return /^vllm:request_success_total\{.*\} [1-9]/m.test(text)
}
