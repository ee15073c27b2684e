import type { z } from 'zod'
import { apiGroup, apiVersion } from '../crd/api-group.ts'
import { inferencePolicyKind } from '../crd/inference-policy-kind.ts'
import { inferencePoolKind } from '../crd/inference-pool-kind.ts'
import {
  isResourceKind,
  type KinferenceResource,
  kindDefinitions,
  type ResourceKind,
  resourceKinds,
} from '../crd/resource.ts'
import { builtinConditions } from '../policy/conditions/builtin-conditions.ts'
import type { ConditionRegistry } from '../policy/conditions/policy-condition.ts'
import type { StrategyRegistry } from '../routing/strategies/define-strategy.ts'
import { builtinStrategies } from '../routing/strategies/strategy-registry.ts'
import { checkReferences } from './check-references.ts'
import type { ConfigIssue, ConfigIssueReason } from './config-issue.ts'

const kindSchemas = Object.fromEntries(
  resourceKinds.map((kind) => [kind, kindDefinitions[kind].schema]),
) as Record<ResourceKind, z.ZodType>

/** A problem with one field of one document. */
export interface FieldIssue {
  path: (string | number)[]
  reason: ConfigIssueReason | 'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueNotSupported'
  message: string
}

/** What is known of a document's identity even when it is invalid. */
export interface DocumentIdentity {
  apiVersion?: string
  kind?: string
  name?: string
  namespace?: string
}

export type DocumentCheck =
  | {
      status: 'valid'
      identity: DocumentIdentity
      resource: KinferenceResource
      issues: FieldIssue[]
    }
  | { status: 'invalid'; identity: DocumentIdentity; issues: FieldIssue[] }
  | { status: 'skipped'; identity: DocumentIdentity; reason: string }

/**
 * Validates parsed documents as one configuration: each against its kind's schema, then
 * all schema-valid ones together for references. Documents of other API groups (a
 * Secret, a Deployment) are skipped, not failed, so policy folders can hold them.
 */
export function validateResources(
  values: readonly unknown[],
  defaultNamespace: string,
  conditions: ConditionRegistry = builtinConditions,
  strategies: StrategyRegistry = builtinStrategies,
): DocumentCheck[] {
  const schemas = {
    ...kindSchemas,
    InferencePolicy: inferencePolicyKind(conditions).schema,
    InferencePool: inferencePoolKind(strategies).schema,
  }
  const checks = values.map((value) => checkDocument(value, schemas))
  const valid = checks.flatMap((check, position) =>
    check.status === 'valid' ? [{ position, resource: check.resource }] : [],
  )
  const { issues } = checkReferences(
    valid.map((entry) => entry.resource),
    defaultNamespace,
    conditions,
  )
  const invalidNames = new Set(
    checks.flatMap((check) =>
      check.status === 'invalid' && check.identity.kind && check.identity.name
        ? [
            `${check.identity.kind}/${check.identity.namespace ?? defaultNamespace}/${check.identity.name}`,
          ]
        : [],
    ),
  )
  const issuesByPosition = new Map<number, FieldIssue[]>()
  for (const issue of issues) {
    const entry = valid[issue.resource]
    if (entry === undefined || isAboutInvalidDocument(issue, invalidNames)) continue
    const list = issuesByPosition.get(entry.position) ?? []
    list.push(issue)
    issuesByPosition.set(entry.position, list)
  }
  for (const [position, found] of issuesByPosition) {
    checks[position] = {
      status: 'invalid',
      identity: checks[position]?.identity ?? {},
      issues: found,
    }
  }
  return checks
}

/** A reference to a document that failed its own schema is not also reported as missing. */
function isAboutInvalidDocument(issue: ConfigIssue, invalidNames: Set<string>): boolean {
  return (
    issue.target !== undefined &&
    invalidNames.has(`${issue.target.kind}/${issue.target.namespace}/${issue.target.name}`)
  )
}

function identify(value: unknown): DocumentIdentity {
  if (typeof value !== 'object' || value === null) return {}
  const record = value as Record<string, unknown>
  const metadata = (
    typeof record.metadata === 'object' && record.metadata !== null ? record.metadata : {}
  ) as Record<string, unknown>
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined)
  return {
    ...(text(record.apiVersion) !== undefined && { apiVersion: text(record.apiVersion) }),
    ...(text(record.kind) !== undefined && { kind: text(record.kind) }),
    ...(text(metadata.name) !== undefined && { name: text(metadata.name) }),
    ...(text(metadata.namespace) !== undefined && { namespace: text(metadata.namespace) }),
  }
}

function checkDocument(value: unknown, schemas: Record<ResourceKind, z.ZodType>): DocumentCheck {
  const identity = identify(value)
  const invalid = (
    path: FieldIssue['path'],
    reason: FieldIssue['reason'],
    message: string,
  ): DocumentCheck => ({
    status: 'invalid',
    identity,
    issues: [{ path, reason, message }],
  })
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalid(
      [],
      'FieldValueInvalid',
      'a document must be a mapping with apiVersion, kind, metadata and spec',
    )
  }
  if (identity.apiVersion === undefined)
    return invalid(['apiVersion'], 'FieldValueRequired', 'apiVersion is required')
  if (identity.kind === undefined)
    return invalid(['kind'], 'FieldValueRequired', 'kind is required')
  const [group, version] = identity.apiVersion.includes('/')
    ? identity.apiVersion.split('/', 2)
    : ['', identity.apiVersion]
  if (group !== apiGroup) {
    return {
      status: 'skipped',
      identity,
      reason: `${identity.apiVersion} ${identity.kind} is not a Kinference resource`,
    }
  }
  if (identity.apiVersion !== apiVersion) {
    return invalid(
      ['apiVersion'],
      'FieldValueNotSupported',
      `unknown version "${version}" of ${apiGroup}; supported: ${apiVersion}`,
    )
  }
  if (!isResourceKind(identity.kind)) {
    return invalid(
      ['kind'],
      'FieldValueNotSupported',
      `unknown kind "${identity.kind}"; known kinds: ${resourceKinds.join(', ')}`,
    )
  }
  const parsed = schemas[identity.kind].safeParse(value, { reportInput: true })
  if (!parsed.success)
    return { status: 'invalid', identity, issues: parsed.error.issues.flatMap(toFieldIssues) }
  return { status: 'valid', identity, resource: parsed.data as KinferenceResource, issues: [] }
}

function toFieldIssues(issue: z.core.$ZodIssue): FieldIssue[] {
  const path = issue.path.filter((part): part is string | number => typeof part !== 'symbol')
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      path: [...path, key],
      reason: 'FieldValueInvalid',
      message: `unknown field "${key}"`,
    }))
  }
  // reportInput is on, so a missing field is an invalid_type issue whose input is undefined.
  const required = issue.code === 'invalid_type' && 'input' in issue && issue.input === undefined
  return [
    {
      path,
      reason: required ? 'FieldValueRequired' : 'FieldValueInvalid',
      message: required ? 'required field is missing' : issue.message,
    },
  ]
}
