import type { CoreV1Api, KubernetesObject } from '@kubernetes/client-node'
import type { AcceptanceEvent } from './config-reconciler.ts'

/** A core/v1 Event on the resource, as `kubectl describe` lists them. */
export async function emitAcceptanceEvent(
  api: CoreV1Api,
  object: KubernetesObject,
  event: AcceptanceEvent,
  instance: string,
): Promise<void> {
  const { name, namespace, uid, resourceVersion } = object.metadata ?? {}
  if (!name || !namespace) return
  const now = new Date()
  await api.createNamespacedEvent({
    namespace,
    body: {
      metadata: { name: `${name}.${now.getTime().toString(16)}`, namespace },
      involvedObject: {
        apiVersion: object.apiVersion,
        kind: object.kind,
        name,
        namespace,
        ...(uid && { uid }),
        ...(resourceVersion && { resourceVersion }),
      },
      type: event.type,
      reason: event.reason,
      message: event.message,
      source: { component: 'kinference-controller' },
      reportingComponent: 'kinference.dev/controller',
      reportingInstance: instance,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    },
  })
}
