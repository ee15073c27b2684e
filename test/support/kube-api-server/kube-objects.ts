import { KubeError } from './kube-error.ts'
import type { KubeObject } from './kube-object.ts'
import type { ResourceApi } from './resource-api.ts'
import type { ResourceRegistry, ResourceType } from './resource-registry.ts'

/**
 * Direct access to the server's objects for tests, without HTTP (and without the request
 * log or fault knobs). Writes follow the API's rules and reach watches like any other.
 * `apiVersion` is `v1` or `group/version`; `namespace` is ignored for cluster resources.
 */
export interface KubeObjects {
  get(apiVersion: string, plural: string, namespace: string, name: string): KubeObject | undefined
  list(apiVersion: string, plural: string, namespace?: string): KubeObject[]
  /** Stores the object with its `.status`, as if a controller had already written it. */
  create(apiVersion: string, plural: string, object: KubeObject): KubeObject
  /**
   * A PUT: `.status` is kept from storage unless `subresource: 'status'`, which writes only
   * `.status`. A metadata.resourceVersion in the object must be current (409 otherwise).
   */
  update(
    apiVersion: string,
    plural: string,
    object: KubeObject,
    options?: { subresource?: 'status' },
  ): KubeObject
  delete(
    apiVersion: string,
    plural: string,
    namespace: string,
    name: string,
  ): KubeObject | undefined
}

export function kubeObjects(api: ResourceApi, registry: ResourceRegistry): KubeObjects {
  const typeOf = (apiVersion: string, plural: string): ResourceType => {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion]
    const type = registry.find(group ?? '', version ?? '', plural)
    if (!type) throw new Error(`the server has no resource ${plural} in ${apiVersion}`)
    return type
  }
  const scoped = (type: ResourceType, namespace: string | undefined) =>
    type.namespaced ? (namespace ?? '') : ''
  const orUndefined = <T>(read: () => T): T | undefined => {
    try {
      return read()
    } catch (error) {
      if (error instanceof KubeError && error.code === 404) return undefined
      throw error
    }
  }
  return {
    get: (apiVersion, plural, namespace, name) => {
      const type = typeOf(apiVersion, plural)
      return orUndefined(() => api.get(type, scoped(type, namespace), name))
    },
    list: (apiVersion, plural, namespace) => {
      const type = typeOf(apiVersion, plural)
      return api.list(type, type.namespaced ? namespace : undefined, () => true)
    },
    create: (apiVersion, plural, object) => {
      const type = typeOf(apiVersion, plural)
      const options = { direct: true, fieldManager: 'kube-objects' }
      return api.create(type, scoped(type, object.metadata.namespace), object, options)
    },
    update: (apiVersion, plural, object, options) => {
      const type = typeOf(apiVersion, plural)
      const namespace = scoped(type, object.metadata.namespace)
      const name = object.metadata.name ?? ''
      const write = { direct: true, fieldManager: 'kube-objects', ...options }
      return api.replace(type, namespace, name, object, write)
    },
    delete: (apiVersion, plural, namespace, name) => {
      const type = typeOf(apiVersion, plural)
      return orUndefined(() => api.delete(type, scoped(type, namespace), name, {}, {}))
    },
  }
}
