import { z } from 'zod'
import { ResourceName } from '../../crd/object-meta.ts'
import { matchNameList, nameListCovers } from './name-list.ts'
import { requestCondition } from './policy-condition.ts'

/** `match.tenants`: the rule applies to these tenants of its policy only. */
export const tenantsCondition = requestCondition({
  key: 'tenants',
  schema: z
    .array(ResourceName)
    .min(1)
    .max(64)
    .optional()
    .describe('Tenants of this policy the rule applies to; all when omitted.'),
  match: (tenants, subject) => matchNameList('tenant', subject.tenant, tenants),
  covers: nameListCovers,
  references: (tenants) =>
    tenants.map((name, position) => ({ path: [position], kind: 'Tenant', name })),
})
