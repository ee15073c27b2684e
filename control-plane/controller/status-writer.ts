import type { CustomObjectsApi, KubernetesObject } from '@kubernetes/client-node'
import type { WatchedKind } from './watched-kinds.ts'

export type StatusWrite = 'unchanged' | 'written' | 'gone'

/**
 * Writes a resource's status through its /status subresource: read-modify-write with the
 * resourceVersion read (PUT), so conditions other controllers own survive, retried on a
 * 409 with a fresh read. `compute` returns null when the status already says it all, so
 * an unchanged status is never written (no write loops).
 */
export async function writeStatus(options: {
  api: CustomObjectsApi
  kind: WatchedKind
  object: KubernetesObject & { status?: unknown }
  compute: (existing: unknown) => Record<string, unknown> | null
  retries?: number
  /**
   * Read the object before the first write too, not only after a 409: for a status other
   * controllers write (an upstream pool's shared status.parents), the cached copy is only
   * used to tell whether anything needs writing.
   */
  readFirst?: boolean
}): Promise<StatusWrite> {
  const { api, kind } = options
  let object = options.object
  const { name, namespace } = object.metadata as { name: string; namespace: string }
  const target = { group: kind.group, version: kind.version, plural: kind.plural, namespace, name }
  if (options.readFirst && options.compute(object.status) !== null) {
    try {
      object = (await api.getNamespacedCustomObjectStatus(target)) as typeof object
    } catch (error) {
      if ((error as { code?: number }).code === 404) return 'gone'
      throw error
    }
  }
  for (let attempt = 0; ; attempt++) {
    const status = options.compute(object.status)
    if (status === null) return 'unchanged'
    try {
      await api.replaceNamespacedCustomObjectStatus({ ...target, body: { ...object, status } })
      return 'written'
    } catch (error) {
      const code = (error as { code?: number }).code
      if (code === 404) return 'gone'
      if (code !== 409 || attempt >= (options.retries ?? 5)) throw error
      object = (await api.getNamespacedCustomObjectStatus(target)) as typeof object
    }
  }
}
