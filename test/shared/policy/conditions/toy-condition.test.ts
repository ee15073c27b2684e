import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { compileSnapshot } from '../../../../shared/config/compile-snapshot.ts'
import { validateResources } from '../../../../shared/config/validate-resources.ts'
import { inferencePolicyKind } from '../../../../shared/crd/inference-policy-kind.ts'
import { buildCrd } from '../../../../shared/crd/openapi/build-crd.ts'
import { ruleMatchSchema } from '../../../../shared/crd/policy-match.ts'
import type { KinferenceResource } from '../../../../shared/crd/resource.ts'
import { noWorkloads } from '../../../../shared/kube/watched-pod.ts'
import { builtinConditions } from '../../../../shared/policy/conditions/builtin-conditions.ts'
import { requestCondition } from '../../../../shared/policy/conditions/policy-condition.ts'
import { evaluatePolicy } from '../../../../shared/policy/evaluate-policy.ts'
import { matchRule } from '../../../../shared/policy/match-rule.ts'
import { tenantPrefixCondition, toyConditions } from '../../../support/toy-condition.ts'

/** A rule per prefix, matching on the toy condition; each rejects, so each is terminal. */
const prefixRules = (...prefixes: string[]) =>
  prefixes.map((prefix, position) => ({
    name: `rule-${position}`,
    match: { tenantPrefix: prefix },
    action: { reject: { status: 403, message: `no ${prefix}` } },
  }))

function policy(rules: object[], tenants: string[] = []) {
  return {
    apiVersion: 'kinference.dev/v1alpha1',
    kind: 'InferencePolicy',
    metadata: { name: 'teams', namespace: 'kinference' },
    spec: {
      tenants: tenants.map((name, position) => ({
        name,
        apiKeys: [{ id: `key${position}`, sha256: 'a'.repeat(64) }],
        models: ['*'],
      })),
      rules,
    },
  }
}

/** A policy parsed with the toy registry, as validate gives it when it is valid. */
const parsed = (document: ReturnType<typeof policy>) =>
  inferencePolicyKind(toyConditions).schema.parse(document) as KinferenceResource

function matchSchemaOf(crd: ReturnType<typeof buildCrd>) {
  const spec = crd.spec.versions[0]?.schema.openAPIV3Schema.properties.spec as {
    properties: { rules: { items: { properties: { match: { properties: object } } } } }
  }
  return spec.properties.rules.items.properties.match.properties
}

describe('a condition registered in one file and one registry line', () => {
  it('appears in the InferencePolicy CRD built with the registry, and only there', () => {
    const toyCrd = buildCrd('InferencePolicy', inferencePolicyKind(toyConditions))
    expect(matchSchemaOf(toyCrd)).toMatchObject({
      tenantPrefix: {
        type: 'string',
        minLength: 1,
        maxLength: 63,
        description: 'The rule applies to tenants whose name starts with this.',
      },
    })
    expect(Object.keys(matchSchemaOf(toyCrd))).toEqual([
      ...builtinConditions.map((condition) => condition.key),
      'tenantPrefix',
    ])
    expect(matchSchemaOf(buildCrd('InferencePolicy'))).not.toHaveProperty('tenantPrefix')
  })

  it('may not take a field another condition has', () => {
    const clash = { ...tenantPrefixCondition, key: 'models' as const }
    expect(() => ruleMatchSchema([...builtinConditions, clash])).toThrow(
      'policy conditions registered twice: models',
    )
  })

  it('validates a policy using it with the registry; the built-in one refuses the field', () => {
    const [toy] = validateResources([policy(prefixRules('team-'))], 'default', toyConditions)
    expect(toy?.status).toBe('valid')
    const [builtin] = validateResources([policy(prefixRules('team-'))], 'default')
    expect(builtin).toMatchObject({
      status: 'invalid',
      issues: [
        {
          path: ['spec', 'rules', 0, 'match', 'tenantPrefix'],
          message: 'unknown field "tenantPrefix"',
        },
      ],
    })
    const [tooLong] = validateResources(
      [policy(prefixRules('t'.repeat(64)))],
      'default',
      toyConditions,
    )
    expect(tooLong).toMatchObject({
      status: 'invalid',
      issues: [{ path: ['spec', 'rules', 0, 'match', 'tenantPrefix'] }],
    })
  })

  it('matches requests by its own match, beside the built-in conditions', () => {
    const subject = (tenant: string) => ({
      tenant,
      model: 'm',
      promptTokens: 10,
      labels: new Set<string>(),
    })
    const match = { tenantPrefix: 'team-', models: ['m'] }
    const noPools = () => undefined
    expect(matchRule(match, 'kinference', subject('team-a'), noPools, toyConditions)).toEqual({
      holds: true,
      why: ['model m', 'tenant team-a starts with team-'],
    })
    expect(matchRule(match, 'kinference', subject('ops'), noPools, toyConditions)).toEqual({
      holds: false,
      why: 'tenant ops does not start with team-',
    })
  })

  it('gives validate its coverage: a rule after a broader one is unreachable, after a narrower one not', () => {
    const [shadowed] = validateResources(
      [policy(prefixRules('team-', 'team-a'))],
      'default',
      toyConditions,
    )
    expect(shadowed).toMatchObject({
      status: 'invalid',
      issues: [
        {
          path: ['spec', 'rules', 1, 'name'],
          reason: 'Unreachable',
          message:
            'rule "rule-1" is unreachable: the earlier rule "rule-0" matches every request it matches',
        },
      ],
    })
    const [reachable] = validateResources(
      [policy(prefixRules('team-a', 'team-'))],
      'default',
      toyConditions,
    )
    expect(reachable?.status).toBe('valid')
  })

  it('gives compile the same coverage when it is handed the registry', async () => {
    const compile = (resources: KinferenceResource[]) =>
      compileSnapshot(resources, 'default', noWorkloads, toyConditions)
    expect(await compile([parsed(policy(prefixRules('team-', 'team-a')))])).toMatchObject({
      ok: false,
      issues: [{ path: ['spec', 'rules', 1, 'name'], reason: 'Unreachable' }],
    })
    const compiled = await compile([parsed(policy(prefixRules('team-a', 'team-')))])
    expect(
      compiled.ok && compiled.snapshot.policies['kinference/teams']?.spec.rules[1]?.match,
    ).toEqual({
      tenantPrefix: 'team-',
    })
  })

  it('decides requests by it when the policy is evaluated with the registry', async () => {
    const everyoneElse = {
      name: 'everyone-else',
      action: { reject: { status: 402, message: 'not a team' } },
    }
    const resource = parsed(policy([...prefixRules('team-'), everyoneElse], ['team-a', 'ops']))
    const compiled = await compileSnapshot([resource], 'default', noWorkloads, toyConditions)
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues))
    const decide = (tenant: string) =>
      evaluatePolicy(
        compiled.snapshot,
        {
          request: { tenant, model: 'm', promptTokens: 10, labels: [], detectorFailed: false },
          poolStatus: () => undefined,
        },
        toyConditions,
      )
    expect(decide('team-a')).toMatchObject({ kind: 'reject', rule: 'rule-0', status: 403 })
    expect(decide('ops')).toMatchObject({
      kind: 'reject',
      rule: 'everyone-else',
      status: 402,
      trace: [
        { rule: 'rule-0', outcome: 'skipped', why: 'tenant ops does not start with team-' },
        { rule: 'everyone-else' },
      ],
    })
  })
})

// npm run typecheck fails if a condition without coverage compiles.
// @ts-expect-error covers is a required member: validate's unreachable-rule check needs it
requestCondition({
  key: 'uncovered',
  schema: z.string().optional(),
  match: () => ({ holds: true, why: [] }),
})
