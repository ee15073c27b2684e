/** Why a set of resources does not form a valid configuration. */
export type ConfigIssueReason =
  | 'Duplicate'
  | 'NotFound'
  | 'Invalid'
  | 'Unreachable'
  | 'LocalityViolation'

/** A problem found across resources, pointing at the field (by path) of one of them. */
export interface ConfigIssue {
  /** Index of the resource in the list that was checked. */
  resource: number
  path: (string | number)[]
  reason: ConfigIssueReason
  message: string
  /** For NotFound: the resource that was looked for. */
  target?: { kind: string; namespace: string; name: string }
}

/** `spec.rules[2].action.route.backends[0]`, the way kubectl and kubeconform print paths. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  let out = ''
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`
    else out += out === '' ? String(part) : `.${String(part)}`
  }
  return out
}
