import { fieldInvalid, invalid, type StatusCause } from './kube-error.ts'
import { isRecord, type KubeObject } from './kube-object.ts'
import type { PrinterColumn, ResourceType } from './resource-registry.ts'

const crdResource = { group: 'apiextensions.k8s.io', plural: 'customresourcedefinitions' }
const crdKind = { ...crdResource, kind: 'CustomResourceDefinition' }

function text(value: unknown): string {
  return typeof value === 'string' ? value : ''
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}

/** The checks the real server makes that matter to a fake: names and versions line up. */
export function validateCrd(crd: KubeObject): void {
  const spec = isRecord(crd.spec) ? crd.spec : {}
  const names = isRecord(spec.names) ? spec.names : {}
  const causes: StatusCause[] = []
  const group = text(spec.group)
  const plural = text(names.plural)
  if (!group) causes.push(fieldInvalid('spec.group', 'Required value'))
  if (!plural) causes.push(fieldInvalid('spec.names.plural', 'Required value'))
  if (!text(names.kind)) causes.push(fieldInvalid('spec.names.kind', 'Required value'))
  if (crd.metadata.name !== `${plural}.${group}`) {
    causes.push(fieldInvalid('metadata.name', 'must be spec.names.plural+"."+spec.group'))
  }
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    causes.push(fieldInvalid('spec.scope', 'Unsupported value: must be Namespaced or Cluster'))
  }
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isRecord) : []
  if (versions.length === 0)
    causes.push(
      fieldInvalid('spec.versions', 'must have exactly one version marked as storage version'),
    )
  else if (versions.filter((v) => v.storage === true).length !== 1) {
    causes.push(
      fieldInvalid('spec.versions', 'must have exactly one version marked as storage version'),
    )
  }
  if (causes.length > 0) throw invalid(crdKind, crd.metadata.name ?? '', causes)
}

/** The resources a (validated) CRD serves, one per served version. */
export function crdResourceTypes(crd: KubeObject): ResourceType[] {
  const spec = crd.spec as Record<string, unknown>
  const names = spec.names as Record<string, unknown>
  const kind = text(names.kind)
  const versions = (spec.versions as unknown[]).filter(isRecord)
  return versions
    .filter((v) => v.served !== false)
    .map((v) => ({
      group: text(spec.group),
      version: text(v.name),
      kind,
      listKind: text(names.listKind) || `${kind}List`,
      plural: text(names.plural),
      singular: text(names.singular) || kind.toLowerCase(),
      namespaced: spec.scope === 'Namespaced',
      shortNames: strings(names.shortNames),
      categories: strings(names.categories),
      statusSubresource: isRecord(v.subresources) && isRecord(v.subresources.status),
      printerColumns: printerColumns(v.additionalPrinterColumns),
      unconditionalUpdate: false,
      definedBy: crd.metadata.name,
      ...openApiSchemaOf(v),
    }))
}

function openApiSchemaOf(version: Record<string, unknown>) {
  const schema = isRecord(version.schema) ? version.schema.openAPIV3Schema : undefined
  return isRecord(schema) ? { schema } : {}
}

function printerColumns(value: unknown): PrinterColumn[] {
  const columns = Array.isArray(value) ? value.filter(isRecord) : []
  if (columns.length === 0) {
    // Without printer columns the real server shows NAME and AGE.
    return [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }]
  }
  return columns.map((c) => ({
    name: text(c.name),
    type: text(c.type),
    jsonPath: text(c.jsonPath),
    ...(typeof c.format === 'string' ? { format: c.format } : {}),
    ...(typeof c.description === 'string' ? { description: c.description } : {}),
    ...(typeof c.priority === 'number' ? { priority: c.priority } : {}),
  }))
}

/** What the apiextensions controllers would write soon after: names accepted, established. */
export function establishedCrdStatus(crd: KubeObject, time: string): Record<string, unknown> {
  const spec = crd.spec as Record<string, unknown>
  const versions = (spec.versions as unknown[]).filter(isRecord)
  const condition = (type: string, reason: string, message: string) => ({
    type,
    status: 'True',
    lastTransitionTime: time,
    reason,
    message,
  })
  return {
    acceptedNames: spec.names,
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
      condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
    ],
    storedVersions: versions.filter((v) => v.storage === true).map((v) => v.name),
  }
}
