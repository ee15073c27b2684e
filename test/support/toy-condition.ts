import { z } from 'zod'
import { builtinPlugins, type Plugins } from '../../shared/plugins.ts'
import { builtinConditions } from '../../shared/policy/conditions/builtin-conditions.ts'
import { requestCondition } from '../../shared/policy/conditions/policy-condition.ts'

/**
 * A condition that is not built in, declared as a contributor would declare one (one file,
 * then one registry line): `match.tenantPrefix` holds for tenants whose name starts with it.
 */
export const tenantPrefixCondition = requestCondition({
  key: 'tenantPrefix',
  schema: z
    .string()
    .min(1)
    .max(63)
    .optional()
    .describe('The rule applies to tenants whose name starts with this.'),
  match: (prefix, subject) =>
    subject.tenant.startsWith(prefix)
      ? { holds: true, why: [`tenant ${subject.tenant} starts with ${prefix}`] }
      : { holds: false, why: `tenant ${subject.tenant} does not start with ${prefix}` },
  // Every tenant starting with "team-a" starts with "team-", not the other way round.
  covers: (earlier, later) => later?.startsWith(earlier) === true,
})

/** The built-in registry with the toy condition added: the one registry line. */
export const toyConditions = [...builtinConditions, tenantPrefixCondition] as const

/** What the edge and the scorer are started with to run it: the built-in strategies beside. */
export const toyConditionPlugins: Plugins = { ...builtinPlugins, conditions: toyConditions }
