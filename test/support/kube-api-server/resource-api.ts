import { applyPatch, type PatchType } from './apply-patch.ts'
import { crdResourceTypes, validateCrd } from './crd-resource-types.ts'
import {
  alreadyExists,
  badRequest,
  fieldInvalid,
  invalid,
  KubeError,
  notFound,
} from './kube-error.ts'
import { isRecord, type KubeObject, kubeTime } from './kube-object.ts'
import type { ObjectMatcher } from './object-selector.ts'
import type { ObjectStore } from './object-store.ts'
import {
  inVersion,
  type ResourceRegistry,
  type ResourceType,
  storageKeyOf,
} from './resource-registry.ts'
import { enforceSchema } from './structural-schema.ts'
import {
  asKubeObject,
  bumpGenerationIfChanged,
  checkFinalizersWhileDeleting,
  checkKind,
  checkPreconditions,
  isNoOp,
  mergeWrite,
  nameForCreate,
  normalizeSecret,
  recordManager,
  setInitialStatus,
  stampCreated,
} from './write-rules.ts'

export type { PatchType } from './apply-patch.ts'

export interface WriteOptions {
  subresource?: 'status'
  dryRun?: boolean
  fieldManager?: string
  /** Direct (test) writes: keep `.status` on create, allow PUT without resourceVersion. */
  direct?: boolean
  /** What unknown fields of a custom resource cause (they are pruned in any case). */
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict'
  /** Collects `Warning` header texts (unknown fields under Warn). */
  warnings?: string[]
}

const namespaces = { group: '', plural: 'namespaces' }
const crds = { group: 'apiextensions.k8s.io', plural: 'customresourcedefinitions' }

/**
 * The API's write semantics over the store, shared by HTTP handlers and direct test
 * access: server-owned metadata, status subresource rules, optimistic concurrency,
 * no-op writes, finalizers, and what CRDs and namespaces imply for other objects.
 */
export class ResourceApi {
  private readonly registry: ResourceRegistry
  private readonly store: ObjectStore
  private readonly now: () => Date

  constructor(registry: ResourceRegistry, store: ObjectStore, now: () => Date) {
    this.registry = registry
    this.store = store
    this.now = now
  }

  get(type: ResourceType, namespace: string, name: string): KubeObject {
    const found = this.store.get(storageKeyOf(type), namespace, name)
    if (!found) throw notFound(type, name)
    return inVersion(type, found)
  }

  list(type: ResourceType, namespace: string | undefined, matches: ObjectMatcher): KubeObject[] {
    return this.store
      .list(storageKeyOf(type), namespace)
      .filter(matches)
      .map((o) => inVersion(type, o))
  }

  create(
    type: ResourceType,
    namespace: string,
    body: unknown,
    options: WriteOptions,
    operation: 'Apply' | 'Update' = 'Update',
  ): KubeObject {
    const object = asKubeObject(body)
    checkKind(type, object)
    this.placeInNamespace(type, object, namespace)
    this.applySchema(type, object, options)
    const name = nameForCreate(type, object)
    if (this.store.get(storageKeyOf(type), namespace, name)) throw alreadyExists(type, name)
    const now = this.now()
    stampCreated(object, now)
    this.normalize(type, object)
    setInitialStatus(type, object, { keep: options.direct === true, time: kubeTime(now) })
    recordManager(object, this.manager(options, operation), now)
    if (options.dryRun) return object
    return this.stored(type, this.store.put(storageKeyOf(type), object))
  }

  replace(
    type: ResourceType,
    namespace: string,
    name: string,
    body: unknown,
    options: WriteOptions,
  ): KubeObject {
    const candidate = asKubeObject(body)
    const rv = candidate.metadata.resourceVersion
    if ((rv === undefined || rv === '') && !type.unconditionalUpdate && !options.direct) {
      const cause = fieldInvalid(
        'metadata.resourceVersion',
        'Invalid value: 0x0: must be specified for an update',
      )
      throw invalid(type, name, [cause])
    }
    return this.update(type, namespace, name, () => candidate, options)
  }

  /** Applies a patch; server-side apply creates a missing object (`created` tells). */
  patch(
    type: ResourceType,
    namespace: string,
    name: string,
    patchType: PatchType,
    patch: unknown,
    options: WriteOptions,
  ): { object: KubeObject; created: boolean } {
    const exists = this.store.get(storageKeyOf(type), namespace, name) !== undefined
    if (!exists && patchType === 'apply' && options.subresource === undefined) {
      const object = asKubeObject(patch)
      if (object.metadata.name !== undefined && object.metadata.name !== name) {
        throw badRequest(
          `the name of the object (${object.metadata.name}) does not match the name on the URL (${name})`,
        )
      }
      object.metadata.name = name
      return { object: this.create(type, namespace, object, options, 'Apply'), created: true }
    }
    const apply = (current: KubeObject) => asKubeObject(applyPatch(patchType, current, patch))
    return { object: this.update(type, namespace, name, apply, options, patchType), created: false }
  }

  delete(
    type: ResourceType,
    namespace: string,
    name: string,
    deleteOptions: unknown,
    options: WriteOptions,
  ): KubeObject {
    const current = this.get(type, namespace, name)
    const preconditions = isRecord(deleteOptions) ? deleteOptions.preconditions : undefined
    checkPreconditions(type, current, isRecord(preconditions) ? preconditions : {})
    if ((current.metadata.finalizers ?? []).length > 0) {
      // Finalizers hold the object: it is marked, and goes when the last one is removed.
      if (current.metadata.deletionTimestamp) return current
      const marked = structuredClone(current)
      marked.metadata.deletionTimestamp = kubeTime(this.now())
      marked.metadata.deletionGracePeriodSeconds = 0
      marked.metadata.generation = (current.metadata.generation ?? 0) + 1
      if (options.dryRun) return marked
      return this.stored(type, this.store.put(storageKeyOf(type), marked))
    }
    if (options.dryRun) return current
    return this.removeNow(type, current)
  }

  deleteCollection(
    type: ResourceType,
    namespace: string | undefined,
    matches: ObjectMatcher,
    options: WriteOptions,
  ): KubeObject[] {
    return this.list(type, namespace, matches).map((o) =>
      this.delete(type, o.metadata.namespace ?? '', o.metadata.name ?? '', {}, options),
    )
  }

  private update(
    type: ResourceType,
    namespace: string,
    name: string,
    produce: (current: KubeObject) => KubeObject,
    options: WriteOptions,
    patchType?: PatchType,
  ): KubeObject {
    const current = this.get(type, namespace, name)
    const candidate = produce(structuredClone(current))
    checkKind(type, candidate)
    this.applySchema(type, candidate, options)
    if (candidate.metadata.name !== undefined && candidate.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${candidate.metadata.name}) does not match the name on the URL (${name})`,
      )
    }
    if (type.namespaced && (candidate.metadata.namespace ?? namespace) !== namespace) {
      throw badRequest('the namespace of the object does not match the namespace on the request')
    }
    checkPreconditions(type, current, candidate.metadata)
    const next = mergeWrite(type, current, candidate, options.subresource)
    checkFinalizersWhileDeleting(type, current, next)
    this.normalize(type, next)
    bumpGenerationIfChanged(type, current, next)
    if (isNoOp(current, next)) return current
    const operation = patchType === 'apply' ? 'Apply' : 'Update'
    recordManager(next, this.manager(options, operation), this.now())
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
      return options.dryRun ? next : this.removeNow(type, next)
    }
    if (options.dryRun) return next
    return this.stored(type, this.store.put(storageKeyOf(type), next))
  }

  private placeInNamespace(type: ResourceType, object: KubeObject, namespace: string): void {
    const meta = object.metadata
    if (!type.namespaced) {
      delete meta.namespace
      return
    }
    if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      )
    }
    meta.namespace = namespace
    if (!this.store.get(storageKeyOf(namespaces), '', namespace)) {
      throw notFound(namespaces, namespace)
    }
  }

  private applySchema(type: ResourceType, object: KubeObject, options: WriteOptions): void {
    if (!type.schema) return
    const mode = options.fieldValidation ?? (options.direct ? 'Strict' : 'Warn')
    enforceSchema(type, object, mode, options.warnings ?? [])
  }

  private normalize(type: ResourceType, object: KubeObject): void {
    if (type.group === '' && type.kind === 'Secret') normalizeSecret(object)
    if (type.kind === 'CustomResourceDefinition') validateCrd(object)
  }

  private manager(options: WriteOptions, operation: 'Apply' | 'Update') {
    return {
      manager: options.fieldManager ?? 'unknown',
      operation,
      ...(options.subresource ? { subresource: options.subresource } : {}),
    }
  }

  /** After a write: CRDs (re)register their resources. */
  private stored(type: ResourceType, object: KubeObject): KubeObject {
    if (storageKeyOf(type) === storageKeyOf(crds)) {
      this.registry.replaceDefinedBy(object.metadata.name ?? '', crdResourceTypes(object))
    }
    return inVersion(type, object)
  }

  /** Removes at once, with what goes with it: a namespace's content, a CRD's objects. */
  private removeNow(type: ResourceType, object: KubeObject): KubeObject {
    const name = object.metadata.name ?? ''
    const key = storageKeyOf(type)
    if (key === storageKeyOf(namespaces)) this.removeNamespaceContent(name)
    if (key === storageKeyOf(crds)) {
      const served = this.registry.all().find((t) => t.definedBy === name)
      if (served) this.removeAll(storageKeyOf(served), undefined)
      this.registry.removeDefinedBy(name)
    }
    const removed = this.store.remove(key, object.metadata.namespace ?? '', name)
    if (!removed) throw new KubeError(500, 'InternalError', `${name} vanished while deleting`)
    return inVersion(type, removed)
  }

  private removeNamespaceContent(namespace: string): void {
    const keys = new Set(
      this.registry
        .all()
        .filter((t) => t.namespaced)
        .map(storageKeyOf),
    )
    for (const key of keys) this.removeAll(key, namespace)
  }

  private removeAll(storageKey: string, namespace: string | undefined): void {
    for (const o of this.store.list(storageKey, namespace)) {
      this.store.remove(storageKey, o.metadata.namespace ?? '', o.metadata.name ?? '')
    }
  }
}
