import type { KubernetesObject } from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import {
  ConfigReconciler,
  type SnapshotSink,
} from '../../../control-plane/controller/config-reconciler.ts'
import { createControllerMetrics } from '../../../control-plane/controller/controller-metrics.ts'
import type { LogFields } from '../../../shared/logging/log.ts'
import { yamlObjects } from '../../support/controller/controller-fixture.ts'

const platform = yamlObjects('infra/k8s/examples/platform.yaml') as KubernetesObject[]

interface Logged {
  message: string
  fields: LogFields
}

/**
 * One reconcile as the leader over `objects`, its log collected with the fields; `publish`
 * and `writeStatus` stand in for Redis and the API server.
 */
async function reconcileLogged(
  objects: readonly KubernetesObject[],
  options: {
    publish?: SnapshotSink['publish']
    writeStatus?: (object: KubernetesObject) => Promise<'written' | 'unchanged'>
  } = {},
) {
  const logged: Logged[] = []
  const reconciler = new ConfigReconciler({
    objects: (kind) => objects.filter((o) => o.kind === kind),
    sink: {
      publish: options.publish ?? (async () => ({ version: 7, changed: true })),
      live: async () => null,
    },
    writeStatus: async (_kind, object, compute) => {
      compute((object as { status?: unknown }).status)
      return options.writeStatus ? options.writeStatus(object) : 'written'
    },
    isLeader: () => true,
    metrics: createControllerMetrics(() => 0),
    log: (message, fields = {}) => logged.push({ message, fields }),
    nowMs: () => 1_790_000_000_000,
    retryLater: () => {},
    emitEvent: async () => {},
  })
  await reconciler.reconcile()
  return logged
}

const named = (kind: string, name: string) => {
  const object = platform.find((o) => o.kind === kind && o.metadata?.name === name)
  if (!object) throw new Error(`no ${kind} ${name} in platform.yaml`)
  return structuredClone(object)
}

describe('the controller’s log lines', () => {
  it('a published snapshot: info, with its version and hash', async () => {
    const logged = await reconcileLogged(platform)
    const published = logged.filter((line) => line.message.endsWith(' published'))
    expect(published).toHaveLength(1)
    expect(published[0]?.message).toMatch(/^snapshot version 7 \(\S+\) published$/)
    expect(published[0]?.fields).toMatchObject({ level: 'info', version: 7 })
    expect(typeof published[0]?.fields.hash).toBe('string')
    expect(published[0]?.message).toContain(String(published[0]?.fields.hash))
  })

  it('a resource accepted for the first time: info, naming it by kind, namespace and name', async () => {
    const logged = await reconcileLogged([named('InferencePool', 'qwen-27b')])
    expect(logged).toContainEqual({
      message: 'InferencePool kinference/qwen-27b accepted (generation 0)',
      fields: {
        level: 'info',
        kind: 'InferencePool',
        namespace: 'kinference',
        name: 'qwen-27b',
        generation: 0,
      },
    })
  })

  it('a refused resource: warn, naming it, with the problems in the message', async () => {
    const broken = named('InferencePool', 'qwen-8b') as KubernetesObject & {
      spec: Record<string, unknown>
    }
    broken.spec.targetPort = 'not a port'
    const logged = await reconcileLogged([named('InferencePool', 'qwen-27b'), broken])
    const refused = logged.filter((line) => line.message.includes(' refused: '))
    expect(refused).toHaveLength(1)
    expect(refused[0]?.message).toMatch(/^InferencePool kinference\/qwen-8b refused: .*targetPort/)
    expect(refused[0]?.fields).toMatchObject({
      level: 'warn',
      kind: 'InferencePool',
      namespace: 'kinference',
      name: 'qwen-8b',
    })
  })

  it('a resource whose status has been written says nothing again', async () => {
    const logged = await reconcileLogged([named('InferencePool', 'qwen-27b')], {
      writeStatus: async () => 'unchanged',
    })
    expect(logged.filter((line) => line.fields.kind === 'InferencePool')).toEqual([])
  })

  it('a status write that fails: warn, naming the resource and the error', async () => {
    const pool = named('InferencePool', 'qwen-27b')
    const logged = await reconcileLogged([pool, named('InferencePool', 'qwen-8b')], {
      writeStatus: async (object) => {
        if (object.metadata?.name === 'qwen-27b') throw new Error('HTTP 409 Conflict, again')
        return 'unchanged'
      },
    })
    expect(logged.filter((line) => line.fields.level === 'warn')).toEqual([
      {
        message: 'status of InferencePool/kinference/qwen-27b: HTTP 409 Conflict, again',
        fields: {
          level: 'warn',
          kind: 'InferencePool',
          namespace: 'kinference',
          name: 'qwen-27b',
          error: 'HTTP 409 Conflict, again',
        },
      },
    ])
  })

  it('publishing that fails: error, with the snapshot’s hash and the error', async () => {
    const logged = await reconcileLogged(platform, {
      publish: async () => {
        throw new Error('ECONNREFUSED 127.0.0.1:6379')
      },
    })
    const failed = logged.filter((line) => line.fields.level === 'error')
    expect(failed).toHaveLength(1)
    expect(failed[0]?.message).toMatch(/^publishing snapshot \S+ failed: ECONNREFUSED/)
    expect(failed[0]?.fields).toMatchObject({ error: 'ECONNREFUSED 127.0.0.1:6379' })
    expect(typeof failed[0]?.fields.hash).toBe('string')
    expect(logged.some((line) => line.message.endsWith(' published'))).toBe(false)
  })

  it('every line has a level, and no message starts with the service’s name', async () => {
    const logged = await reconcileLogged(platform)
    expect(logged.length).toBeGreaterThan(0)
    for (const line of logged) {
      expect(['debug', 'info', 'warn', 'error']).toContain(line.fields.level)
      expect(line.message).not.toMatch(/^controller:/)
    }
  })
})
