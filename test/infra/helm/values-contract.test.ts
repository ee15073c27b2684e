import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { chartDir } from '../../support/helm-chart.ts'

/**
 * The keys infra/terraform's kinference module sets: renaming one breaks that module, so
 * each must stay in values.yaml (with a default of the same type the module passes).
 */
const contract = [
  'image.repository',
  'image.tag',
  'image.pullPolicy',
  'controller.replicas',
  'controller.resources',
  'scorer.replicas',
  'scorer.resources',
  'scorer.autoscaling.enabled',
  'scorer.autoscaling.minReplicas',
  'scorer.autoscaling.maxReplicas',
  'scorer.autoscaling.targetCPUUtilizationPercentage',
  'scorer.podDisruptionBudget.minAvailable',
  'scorer.terminationGracePeriodSeconds',
  'scorer.service.port',
  'secrets.redis.name',
  'secrets.redis.urlKey',
  'secrets.edgeSigning.name',
  'secrets.edgeSigning.key',
  'secrets.adminToken.name',
  'secrets.adminToken.key',
  'secrets.cloudflareApiToken.name',
  'secrets.cloudflareApiToken.key',
  'cloudflare.enabled',
  'cloudflare.accountId',
  'cloudflare.kvNamespaceId',
  'vllm.namespace',
  'vllm.podSelector',
  'vllm.httpPort',
  'vllm.kvEventsPort',
  'vllm.replayPort',
  'networkPolicy.enabled',
  'networkPolicy.scorerIngressFrom',
  'serviceMonitor.enabled',
  'serviceMonitor.interval',
]

const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8'))
const at = (path: string) =>
  path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key], values)

describe('values.yaml keeps the keys the Terraform kinference module sets', () => {
  it.each(contract)('%s', (path) => {
    expect(at(path), path).toBeDefined()
  })

  it('defaults vLLM to its HTTP port 8000', () => {
    expect(at('vllm.httpPort')).toBe(8000)
  })
})
