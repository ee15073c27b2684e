import type { KinferenceResource } from '../crd/resource.ts'
import type { Workloads } from '../kube/watched-pod.ts'
import type { ConditionRegistry } from '../policy/conditions/policy-condition.ts'
import { checkReferences } from './check-references.ts'
import { type CompileResult, compileSnapshot } from './compile-snapshot.ts'
import { formatFieldPath } from './config-issue.ts'
import { type FieldIssue, validateResources } from './validate-resources.ts'

/** A resource as a cluster holds it now, under its `Kind/namespace/name` key. */
export interface LiveDocument {
  key: string
  value: unknown
}

export interface Verdict {
  /** Its current generation validates, alone and with the rest. */
  accepted: boolean
  /** Its references resolve; Unknown when its schema did not validate. */
  resolvedRefs: 'True' | 'False' | 'Unknown'
  /** Each problem as kinfctl validate prints it: `field.path: message`. */
  problems: string[]
  /** Which of its versions the compiled config carries. */
  carried: 'current' | 'previous' | 'none'
}

export interface LiveCompile {
  verdicts: Map<string, Verdict>
  /** The version of each resource the config carries: the next call's `lastGood`. */
  carried: Map<string, KinferenceResource>
  result: CompileResult
}

/**
 * Compiles a live set of resources and fails static: a resource whose current version
 * does not validate (its schema, or against the others) is reported and its last
 * accepted version is carried instead, or nothing when it never had one. So a broken
 * change never takes down what was working, and everything else still goes live.
 */
export async function compileLiveConfig(options: {
  documents: readonly LiveDocument[]
  lastGood: ReadonlyMap<string, KinferenceResource>
  workloads: Workloads
  defaultNamespace: string
  /** The rule conditions policies may use; the built-in ones when omitted. */
  conditions?: ConditionRegistry
}): Promise<LiveCompile> {
  const { documents, lastGood, defaultNamespace, conditions } = options
  const checks = validateResources(
    documents.map((document) => document.value),
    defaultNamespace,
    conditions,
  )
  const verdicts = new Map<string, Verdict>()
  const chosen = new Map<string, { resource: KinferenceResource; current: boolean }>()
  documents.forEach((document, position) => {
    const check = checks[position]
    if (check === undefined || check.status === 'skipped') return
    if (check.status === 'valid') {
      chosen.set(document.key, { resource: check.resource, current: true })
      verdicts.set(document.key, verdict(true, [], 'current'))
      return
    }
    const schemaValid = check.issues.every(isCrossResourceIssue)
    const previous = lastGood.get(document.key)
    if (previous) chosen.set(document.key, { resource: previous, current: false })
    verdicts.set(document.key, {
      ...verdict(false, check.issues, previous ? 'previous' : 'none'),
      ...(!schemaValid && { resolvedRefs: 'Unknown' }),
    })
  })
  settle(chosen, verdicts, lastGood, defaultNamespace, conditions)
  const carried = new Map([...chosen].map(([key, entry]) => [key, entry.resource]))
  const result = await compileSnapshot(
    [...carried.values()],
    defaultNamespace,
    options.workloads,
    conditions,
  )
  return { verdicts, carried, result }
}

function verdict(
  accepted: boolean,
  issues: readonly FieldIssue[],
  carried: Verdict['carried'],
): Verdict {
  return {
    accepted,
    resolvedRefs: issues.some((issue) => issue.reason === 'NotFound') ? 'False' : 'True',
    problems: issues.map((issue) => `${formatFieldPath(issue.path) || '.'}: ${issue.message}`),
    carried,
  }
}

const crossReasons = new Set([
  'Duplicate',
  'NotFound',
  'Invalid',
  'Unreachable',
  'LocalityViolation',
])
const isCrossResourceIssue = (issue: FieldIssue) => crossReasons.has(issue.reason)

/**
 * Carrying previous versions can break references again (a kept policy naming a
 * backend that is gone): fall back once more, to the previous version of a current
 * resource or to nothing, until the set checks clean. Each round removes at least one.
 */
function settle(
  chosen: Map<string, { resource: KinferenceResource; current: boolean }>,
  verdicts: Map<string, Verdict>,
  lastGood: ReadonlyMap<string, KinferenceResource>,
  defaultNamespace: string,
  conditions: ConditionRegistry | undefined,
) {
  for (let round = 0; round <= chosen.size; round++) {
    const keys = [...chosen.keys()]
    const { issues } = checkReferences(
      keys.map((key) => (chosen.get(key) as { resource: KinferenceResource }).resource),
      defaultNamespace,
      conditions,
    )
    if (issues.length === 0) return
    for (const key of new Set(issues.map((issue) => keys[issue.resource] as string))) {
      const entry = chosen.get(key)
      const own = issues.filter((issue) => keys[issue.resource] === key)
      const previous = lastGood.get(key)
      if (entry?.current && previous) {
        chosen.set(key, { resource: previous, current: false })
        verdicts.set(key, verdict(false, own, 'previous'))
      } else {
        chosen.delete(key)
        const before = verdicts.get(key)
        verdicts.set(key, {
          ...verdict(false, own, 'none'),
          ...(before && !before.accepted && { problems: before.problems }),
        })
      }
    }
  }
}
