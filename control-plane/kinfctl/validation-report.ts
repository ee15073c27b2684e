import type { z } from 'zod'
import { formatFieldPath } from '../../shared/config/config-issue.ts'
import { type DocumentCheck, validateResources } from '../../shared/config/validate-resources.ts'
import type { KinferenceResource } from '../../shared/crd/resource.ts'
import { WatchedEndpointSlice, WatchedPod, type Workloads } from '../../shared/kube/watched-pod.ts'
import { type LoadResult, loadDocuments } from './load-documents.ts'
import { locateField } from './locate-field.ts'

export type ResourceStatus = 'valid' | 'invalid' | 'error' | 'skipped'

export interface ReportedError {
  line: number
  column: number
  field: string
  reason: string
  message: string
}

/** One document's outcome, in the shape of kubeconform's JSON output plus positions. */
export interface ResourceReport {
  filename: string
  line: number
  kind?: string
  name?: string
  namespace?: string
  version?: string
  status: ResourceStatus
  errors: ReportedError[]
}

export interface ValidationReport {
  files: number
  resources: ResourceReport[]
  summary: { valid: number; invalid: number; errors: number; skipped: number }
  /** The schema-valid Kinference resources, when every document is valid. */
  valid: KinferenceResource[]
  /** Pods and EndpointSlices among the documents: the endpoints compile resolves. */
  workloads: Workloads
}

/** Loads, validates as one configuration, and points every problem at file:line. */
export async function validateInputs(
  inputs: readonly string[],
  defaultNamespace: string,
  readStdin: () => Promise<string>,
): Promise<ValidationReport> {
  const loaded = await loadDocuments(inputs, readStdin)
  const checks = validateResources(
    loaded.documents.map((document) => document.value),
    defaultNamespace,
  )
  const fileOrder = new Map(loaded.files.map((file, i) => [file, i]))
  const resources = [
    ...loadErrors(loaded),
    ...checks.map((check, i) => toReport(loaded, i, check)),
  ].sort(
    (a, b) =>
      (fileOrder.get(a.filename) ?? -1) - (fileOrder.get(b.filename) ?? -1) || a.line - b.line,
  )
  const count = (status: ResourceStatus) => resources.filter((r) => r.status === status).length
  const summary = {
    valid: count('valid'),
    invalid: count('invalid'),
    errors: count('error'),
    skipped: count('skipped'),
  }
  const allValid = summary.invalid === 0 && summary.errors === 0
  return {
    files: loaded.files.length,
    resources,
    summary,
    valid: allValid
      ? checks.flatMap((check) => (check.status === 'valid' ? [check.resource] : []))
      : [],
    workloads: workloadsOf(loaded.documents.map((document) => document.value)),
  }
}

function workloadsOf(values: readonly unknown[]): Workloads {
  const pick = <T>(schema: z.ZodType<T>, kind: string, apiVersion: string) =>
    values.flatMap((value) => {
      const typed = value as { kind?: unknown; apiVersion?: unknown } | null
      if (typed?.kind !== kind || typed.apiVersion !== apiVersion) return []
      const parsed = schema.safeParse(value)
      return parsed.success ? [parsed.data] : []
    })
  return {
    pods: pick(WatchedPod, 'Pod', 'v1'),
    endpointSlices: pick(WatchedEndpointSlice, 'EndpointSlice', 'discovery.k8s.io/v1'),
  }
}

function loadErrors(loaded: LoadResult): ResourceReport[] {
  return loaded.errors.map((error) => ({
    filename: error.file,
    line: error.start.line,
    status: 'error',
    errors: [
      {
        line: error.start.line,
        column: error.start.column,
        field: '',
        reason: 'ParseError',
        message: error.message,
      },
    ],
  }))
}

function toReport(loaded: LoadResult, index: number, check: DocumentCheck): ResourceReport {
  const document = loaded.documents[index]
  if (document === undefined) throw new Error(`no document ${index}`)
  const { apiVersion, kind, name, namespace } = check.identity
  const issues = check.status === 'skipped' ? [] : check.issues
  return {
    filename: document.file,
    line: document.start.line,
    ...(kind !== undefined && { kind }),
    ...(name !== undefined && { name }),
    ...(namespace !== undefined && { namespace }),
    ...(apiVersion !== undefined && { version: apiVersion }),
    status: check.status,
    errors: issues
      .map((issue) => {
        const at = locateField(document, issue.path)
        return {
          line: at.line,
          column: at.column,
          field: formatFieldPath(issue.path),
          reason: issue.reason,
          message: issue.message,
        }
      })
      .sort((a, b) => a.line - b.line || a.column - b.column),
  }
}

/** kubeconform-style text: one line per problem, and a summary on request. */
export function formatText(
  report: ValidationReport,
  options: { summary: boolean; verbose: boolean },
): string {
  const lines: string[] = []
  for (const resource of report.resources) {
    const who = resource.kind ? `${resource.kind}${resource.name ? `/${resource.name}` : ''}` : ''
    if (resource.status === 'valid' || resource.status === 'skipped') {
      if (options.verbose)
        lines.push(`${resource.filename}:${resource.line}: ${who} is ${resource.status}`)
      continue
    }
    for (const error of resource.errors) {
      const where =
        error.line > 0 ? `${resource.filename}:${error.line}:${error.column}` : resource.filename
      const what = [who, error.field].filter(Boolean).join(' ')
      lines.push(`${where}: ${what ? `${what}: ` : ''}${error.message}`)
    }
  }
  if (options.summary) {
    const { valid, invalid, errors, skipped } = report.summary
    const total = report.resources.length
    lines.push(
      `Summary: ${total} resource${total === 1 ? '' : 's'} found in ${report.files} file${report.files === 1 ? '' : 's'} - Valid: ${valid}, Invalid: ${invalid}, Errors: ${errors}, Skipped: ${skipped}`,
    )
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : ''
}

export function formatJson(report: ValidationReport): string {
  return `${JSON.stringify({ resources: report.resources, summary: report.summary }, null, 2)}\n`
}
