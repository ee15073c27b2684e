import { evaluateJsonPath } from './json-path.ts'
import type { KubeObject } from './kube-object.ts'
import type { PrinterColumn, ResourceType } from './resource-registry.ts'

export type IncludeObject = 'None' | 'Metadata' | 'Object'

/** The meta.k8s.io Table version an Accept header asks for (`as=Table;v=v1;g=meta.k8s.io`). */
export function requestedTableVersion(accept: string | undefined): string | undefined {
  for (const mediaType of (accept ?? '').split(',')) {
    const params = new Map(
      mediaType
        .split(';')
        .slice(1)
        .map((p) => p.trim().split('=') as [string, string]),
    )
    const version = params.get('v')
    const known = version === 'v1' || version === 'v1beta1'
    if (params.get('as') === 'Table' && params.get('g') === 'meta.k8s.io' && known) return version
  }
  return undefined
}

const nameColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  priority: 0,
}

/** What `kubectl get` prints: NAME, then the resource's printer columns, evaluated here. */
export function toTable(
  type: ResourceType,
  objects: KubeObject[],
  options: { version: string; resourceVersion: string; includeObject: IncludeObject; now: Date },
): Record<string, unknown> {
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${options.version}`,
    metadata: { resourceVersion: options.resourceVersion },
    columnDefinitions: [
      nameColumn,
      ...type.printerColumns.map((c) => ({
        name: c.name,
        type: c.type,
        format: c.format ?? '',
        description: c.description ?? '',
        priority: c.priority ?? 0,
      })),
    ],
    rows: objects.map((object) => ({
      cells: [
        object.metadata.name,
        ...type.printerColumns.map((c) => cell(c, object, options.now)),
      ],
      ...rowObject(object, options),
    })),
  }
}

function rowObject(
  object: KubeObject,
  options: { version: string; includeObject: IncludeObject },
): Record<string, unknown> {
  if (options.includeObject === 'None') return {}
  if (options.includeObject === 'Object') return { object }
  return {
    object: {
      kind: 'PartialObjectMetadata',
      apiVersion: `meta.k8s.io/${options.version}`,
      metadata: object.metadata,
    },
  }
}

/** As the apiextensions table convertor: the first match, typed by the column. */
function cell(column: PrinterColumn, object: KubeObject, now: Date): unknown {
  const [value] = evaluateJsonPath(column.jsonPath, object)
  if (value === undefined || value === null) return null
  switch (column.type) {
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null
    case 'number':
      return typeof value === 'number' ? value : null
    case 'boolean':
      return typeof value === 'boolean' ? value : null
    case 'date':
      return typeof value === 'string' ? age(value, now) : null
    default:
      return typeof value === 'object' ? JSON.stringify(value) : String(value)
  }
}

function age(timestamp: string, now: Date): string {
  const time = Date.parse(timestamp)
  if (Number.isNaN(time)) return '<invalid>'
  return humanDuration((now.getTime() - time) / 1000)
}

/** k8s.io/apimachinery's duration.HumanDuration, which kubectl's AGE column shows. */
export function humanDuration(totalSeconds: number): string {
  const seconds = Math.trunc(totalSeconds)
  if (seconds < -1) return '<invalid>'
  if (seconds < 0) return '0s'
  if (seconds < 120) return `${seconds}s`
  const minutes = Math.trunc(seconds / 60)
  if (minutes < 10) return withRest(minutes, 'm', seconds % 60, 's')
  if (minutes < 180) return `${minutes}m`
  const hours = Math.trunc(minutes / 60)
  if (hours < 8) return withRest(hours, 'h', minutes % 60, 'm')
  if (hours < 48) return `${hours}h`
  const days = Math.trunc(hours / 24)
  if (hours < 24 * 8) return withRest(days, 'd', hours % 24, 'h')
  if (hours < 24 * 365 * 2) return `${days}d`
  const years = Math.trunc(days / 365)
  if (hours < 24 * 365 * 8) return withRest(years, 'y', days % 365, 'd')
  return `${years}y`
}

function withRest(major: number, majorUnit: string, minor: number, minorUnit: string): string {
  return minor === 0 ? `${major}${majorUnit}` : `${major}${majorUnit}${minor}${minorUnit}`
}
