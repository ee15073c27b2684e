import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { chartDir, chartVariants, type RenderOptions } from './helm-chart.ts'

type Values = Record<string, unknown>

const isMap = (value: unknown): value is Values =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Helm's merge of a values file over the chart's: maps merge key by key, the rest replaces. */
function mergeValues(base: Values, over: Values): Values {
  const merged: Values = { ...base }
  for (const [key, value] of Object.entries(over)) {
    const current = merged[key]
    merged[key] = isMap(current) && isMap(value) ? mergeValues(current, value) : value
  }
  return merged
}

/** The values a variant renders with: values.yaml, then its values file (no --set). */
export function variantValues(options: RenderOptions): Values {
  const defaults = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as Values
  if (options.valuesFile === undefined) return defaults
  return mergeValues(defaults, (parse(readFileSync(options.valuesFile, 'utf8')) ?? {}) as Values)
}

/** A value of a variant by its dotted path (undefined when absent). */
export function variantValue(options: RenderOptions, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((node, key) => (isMap(node) ? node[key] : undefined), variantValues(options))
}

/** The chart variants (default values, ci/*.yaml) that render the in-cluster edge. */
export const edgeVariants = chartVariants.filter(
  ({ options }) => variantValue(options, 'edge.enabled') === true,
)
