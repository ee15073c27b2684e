import type { z } from 'zod'
import { formatFieldPath } from '../../shared/config/config-issue.ts'
import { type DocumentCheck, validateResources } from '../../shared/config/validate-resources.ts'
import type { KinferenceResource } from '../../shared/crd/resource.ts'
import {
  UpstreamInferencePool,
  upstreamPoolGroup,
  upstreamPoolVersion,
} from '../../shared/kube/upstream-inference-pool.ts'
import { WatchedEndpointSlice, WatchedPod, type Workloads } from '../../shared/kube/watched-pod.ts'
import type { ConditionRegistry } from '../../shared/policy/conditions/policy-condition.ts'
import type { StrategyRegistry } from '../../shared/routing/strategies/define-strategy.ts'
import type { TokenizerSourceProblem } from '../tokenizer/check-tokenizer-source.ts'
import { checkPoolTokenizers } from './check-pool-tokenizers.ts'
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
  /** What could not be checked from here (a tokenizer path not readable on this machine). */
  warnings?: ReportedError[]
}

export interface ValidationReport {
  files: number
  resources: ResourceReport[]
  /** Resources by status, and the warnings of all of them. */
  summary: { valid: number; invalid: number; errors: number; skipped: number; warnings: number }
  /** The schema-valid Kinference resources, when every document is valid. */
  valid: KinferenceResource[]
  /** Pods and EndpointSlices among the documents: the endpoints compile resolves. */
  workloads: Workloads
}

/** What a build registers beyond the built-ins; kinfctl itself runs the built-ins. */
export interface ValidationPlugins {
  conditions?: ConditionRegistry
  strategies?: StrategyRegistry
}

/** Loads, validates as one configuration, and points every problem at file:line. */
export async function validateInputs(
  inputs: readonly string[],
  defaultNamespace: string,
  readStdin: () => Promise<string>,
  plugins: ValidationPlugins = {},
): Promise<ValidationReport> {
  const loaded = await loadDocuments(inputs, readStdin)
  const checks = validateResources(
    loaded.documents.map((document) => document.value),
    defaultNamespace,
    plugins.conditions,
    plugins.strategies,
  )
  const fileOrder = new Map(loaded.files.map((file, i) => [file, i]))
  // A tokenizer path several pools name is loaded once.
  const tokenizers = new Map<string, TokenizerSourceProblem[]>()
  const resources = [
    ...loadErrors(loaded),
    ...checks.map((check, i) => withTokenizerChecks(loaded, i, check, tokenizers)),
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
    warnings: resources.reduce((sum, r) => sum + (r.warnings?.length ?? 0), 0),
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
    // Files name no Endpoint Picker: a pool's upstreamPoolRef may name any of them.
    upstreamPools: pick(
      UpstreamInferencePool,
      'InferencePool',
      `${upstreamPoolGroup}/${upstreamPoolVersion}`,
    ),
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

/**
 * A schema-valid pool's tokenizer paths checked where kinfctl can read them: a problem
 * with the files is an error (the resource is invalid), an unreadable path a warning.
 */
function withTokenizerChecks(
  loaded: LoadResult,
  index: number,
  check: DocumentCheck,
  checked: Map<string, TokenizerSourceProblem[]>,
): ResourceReport {
  const report = toReport(loaded, index, check)
  if (check.status !== 'valid') return report
  const document = loaded.documents[index]
  if (document === undefined) return report
  const problems = checkPoolTokenizers(check.resource, checked)
  const reported = (severity: 'error' | 'warning') =>
    problems
      .filter((problem) => problem.severity === severity)
      .map((problem) => {
        const at = locateField(document, problem.path)
        return {
          line: at.line,
          column: at.column,
          field: formatFieldPath(problem.path),
          reason: severity === 'error' ? 'Invalid' : 'NotChecked',
          message: problem.message,
        }
      })
  const errors = reported('error')
  const warnings = reported('warning')
  return {
    ...report,
    ...(errors.length > 0 && { status: 'invalid' as const, errors: [...report.errors, ...errors] }),
    ...(warnings.length > 0 && { warnings }),
  }
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

function whoOf(resource: ResourceReport): string {
  return resource.kind ? `${resource.kind}${resource.name ? `/${resource.name}` : ''}` : ''
}

/** A resource's warnings, one `file:line:column: warning: kind/name field: message` each. */
function warningLines(resource: ResourceReport): string[] {
  return (resource.warnings ?? []).map((warning) => {
    const what = [whoOf(resource), warning.field].filter(Boolean).join(' ')
    return `${resource.filename}:${warning.line}:${warning.column}: warning: ${what}: ${warning.message}`
  })
}

/** The warnings of every resource, as formatText prints them (compile prints them too). */
export function formatWarnings(report: ValidationReport): string {
  const lines = report.resources.flatMap(warningLines)
  return lines.length > 0 ? `${lines.join('\n')}\n` : ''
}

/** kubeconform-style text: one line per problem, and a summary on request. */
export function formatText(
  report: ValidationReport,
  options: { summary: boolean; verbose: boolean },
): string {
  const lines: string[] = []
  for (const resource of report.resources) {
    const who = whoOf(resource)
    lines.push(...warningLines(resource))
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
    const { valid, invalid, errors, skipped, warnings } = report.summary
    const total = report.resources.length
    lines.push(
      `Summary: ${total} resource${total === 1 ? '' : 's'} found in ${report.files} file${report.files === 1 ? '' : 's'} - Valid: ${valid}, Invalid: ${invalid}, Errors: ${errors}, Skipped: ${skipped}${warnings > 0 ? `, Warnings: ${warnings}` : ''}`,
    )
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : ''
}

export function formatJson(report: ValidationReport): string {
  return `${JSON.stringify({ resources: report.resources, summary: report.summary }, null, 2)}\n`
}
