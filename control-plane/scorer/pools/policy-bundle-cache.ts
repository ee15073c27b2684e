import { z } from 'zod'
import { type ConfigSnapshot, snapshotSchemaOf } from '../../../shared/config/config-snapshot.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { builtinPlugins, type Plugins } from '../../../shared/plugins.ts'
import type { ConditionRegistry } from '../../../shared/policy/conditions/policy-condition.ts'

/** Distinct bundles kept parsed: a handful of tenants' policies per snapshot. */
const maxBundles = 256

/**
 * Policy bundles (policyBundleOf) as the edge sends them, parsed and validated once per
 * distinct text: an edge sends the same text for a tenant until its snapshot changes.
 * Parsed with the scorer's plugins (their schema built once, here), and read with their
 * conditions.
 */
export class PolicyBundleCache {
  /** The conditions the bundles' rules are read with (interpretRequest). */
  readonly conditions: ConditionRegistry
  private readonly schema: z.ZodType<ConfigSnapshot>
  private readonly parsed = new Map<string, ConfigSnapshot>()

  constructor(plugins: Plugins = builtinPlugins) {
    this.conditions = plugins.conditions
    this.schema = snapshotSchemaOf(plugins)
  }

  get(json: string): ConfigSnapshot {
    const known = this.parsed.get(json)
    if (known) {
      // Most recently used last, so the oldest goes first.
      this.parsed.delete(json)
      this.parsed.set(json, known)
      return known
    }
    let value: unknown
    try {
      value = JSON.parse(json)
    } catch (error) {
      throw new KinfError('invalid_request', `policy bundle: ${(error as Error).message}`)
    }
    const bundle = this.schema.safeParse(value)
    if (!bundle.success)
      throw new KinfError('invalid_request', `policy bundle: ${z.prettifyError(bundle.error)}`)
    if (this.parsed.size >= maxBundles) {
      const oldest = this.parsed.keys().next().value
      if (oldest !== undefined) this.parsed.delete(oldest)
    }
    this.parsed.set(json, bundle.data)
    return bundle.data
  }
}
