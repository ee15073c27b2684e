import type { ResourceName } from './kube-error.ts'

/** A CRD's additionalPrinterColumns entry (Name always comes first, added by the table). */
export interface PrinterColumn {
  name: string
  type: string
  jsonPath: string
  format?: string
  description?: string
  priority?: number
}

/** One served version of one resource: what discovery lists and the handlers follow. */
export interface ResourceType extends ResourceName {
  version: string
  kind: string
  listKind: string
  singular: string
  namespaced: boolean
  shortNames: string[]
  categories: string[]
  /** `.status` is written only through `/status`, and `.spec` changes alone bump generation. */
  statusSubresource: boolean
  printerColumns: PrinterColumn[]
  /** PUT without metadata.resourceVersion: built-ins allow it, custom resources do not. */
  unconditionalUpdate: boolean
  /** The CustomResourceDefinition that registered it; built-ins have none. */
  definedBy?: string
  /** The version's openAPIV3Schema (custom resources): pruning, defaults, OpenAPI. */
  schema?: Record<string, unknown>
}

export const resourceVerbs = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
]

export function apiVersionOf(type: { group: string; version: string }): string {
  return type.group ? `${type.group}/${type.version}` : type.version
}

/** Storage keeps one version; each served version shows its own apiVersion. */
export function inVersion<T extends { apiVersion?: string }>(type: ResourceType, object: T): T {
  const apiVersion = apiVersionOf(type)
  return object.apiVersion === apiVersion ? object : { ...object, apiVersion }
}

/** Objects of every version of one resource share storage, as they share etcd keys. */
export function storageKeyOf(type: ResourceName): string {
  return `${type.group}/${type.plural}`
}

/** The resources the server knows, in registration order (discovery lists them so). */
export class ResourceRegistry {
  private readonly types = new Map<string, ResourceType>()

  add(type: ResourceType): void {
    this.types.set(`${type.group}/${type.version}/${type.plural}`, type)
  }

  find(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.get(`${group}/${version}/${plural}`)
  }

  /** Any served version of the resource: the one storage and watch events speak. */
  findAnyVersion(group: string, plural: string): ResourceType | undefined {
    return this.all().find((t) => t.group === group && t.plural === plural)
  }

  all(): ResourceType[] {
    return [...this.types.values()]
  }

  inGroupVersion(group: string, version: string): ResourceType[] {
    return this.all().filter((t) => t.group === group && t.version === version)
  }

  /** Groups and their versions, the core group ('') included. */
  groupVersions(): Map<string, string[]> {
    const groups = new Map<string, string[]>()
    for (const type of this.all()) {
      const versions = groups.get(type.group) ?? []
      if (!versions.includes(type.version)) versions.push(type.version)
      groups.set(type.group, versions)
    }
    return groups
  }

  /** Replaces whatever the CRD registered before (its versions may have changed). */
  replaceDefinedBy(crdName: string, types: ResourceType[]): void {
    this.removeDefinedBy(crdName)
    for (const type of types) this.add(type)
  }

  removeDefinedBy(crdName: string): void {
    for (const [key, type] of this.types) {
      if (type.definedBy === crdName) this.types.delete(key)
    }
  }
}
