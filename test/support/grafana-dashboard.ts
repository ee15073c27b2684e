import { readFileSync } from 'node:fs'
import { z } from 'zod'

/** Panels on a Prometheus data source chosen by the dashboard's `datasource` variable. */
const PrometheusDatasource = z.strictObject({
  type: z.literal('prometheus'),
  // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax
  uid: z.literal('${datasource}'),
})

/** Grafana's grid is 24 columns wide. */
const GridPos = z
  .strictObject({
    h: z.int().min(1),
    w: z.int().min(1).max(24),
    x: z.int().min(0).max(23),
    y: z.int().min(0),
  })
  .refine((pos) => pos.x + pos.w <= 24, 'gridPos runs past the 24 columns')

const Target = z.looseObject({
  datasource: PrometheusDatasource,
  expr: z.string().min(1),
  legendFormat: z.string().optional(),
  refId: z.string().regex(/^[A-Z]+$/),
})

const Row = z.looseObject({
  id: z.int().min(1),
  type: z.literal('row'),
  title: z.string().min(1),
  gridPos: GridPos,
  collapsed: z.boolean(),
  panels: z.array(z.unknown()).length(0),
})

const QueryPanel = z.looseObject({
  id: z.int().min(1),
  type: z.enum(['timeseries', 'stat', 'gauge', 'bargauge', 'table', 'heatmap']),
  title: z.string().min(1),
  description: z.string().min(1),
  datasource: PrometheusDatasource,
  gridPos: GridPos,
  fieldConfig: z.looseObject({ defaults: z.looseObject({}), overrides: z.array(z.unknown()) }),
  options: z.looseObject({}),
  targets: z
    .array(Target)
    .min(1)
    .refine((targets) => new Set(targets.map((t) => t.refId)).size === targets.length, {
      message: 'refIds repeat within the panel',
    }),
})

const DatasourceVariable = z.looseObject({
  name: z.literal('datasource'),
  type: z.literal('datasource'),
  query: z.literal('prometheus'),
})

const QueryVariable = z.looseObject({
  name: z.string().regex(/^\w+$/),
  type: z.literal('query'),
  datasource: PrometheusDatasource,
  definition: z.string().min(1),
  query: z.looseObject({ query: z.string().min(1), refId: z.string() }),
  refresh: z.union([z.literal(1), z.literal(2)]),
})

/**
 * The subset of Grafana's dashboard JSON model (schemaVersion 36 and later, Grafana 9+)
 * infra/grafana dashboards are held to: rows and query panels only, each query panel and
 * target on the Prometheus data source the `datasource` variable picks.
 */
export const GrafanaDashboard = z.looseObject({
  uid: z.string().regex(/^[a-zA-Z0-9_-]{1,40}$/),
  title: z.string().min(1),
  schemaVersion: z.int().min(36),
  version: z.int().min(1),
  editable: z.boolean(),
  time: z.strictObject({ from: z.string(), to: z.string() }),
  refresh: z.string(),
  tags: z.array(z.string()),
  panels: z.array(z.union([Row, QueryPanel])).min(1),
  templating: z.strictObject({
    list: z.array(z.union([DatasourceVariable, QueryVariable])),
  }),
})
export type GrafanaDashboard = z.infer<typeof GrafanaDashboard>
export type QueryPanel = z.infer<typeof QueryPanel>
export type QueryVariable = z.infer<typeof QueryVariable>

/** A dashboard file parsed as JSON and checked against GrafanaDashboard; throws otherwise. */
export function readGrafanaDashboard(path: string): GrafanaDashboard {
  return GrafanaDashboard.parse(JSON.parse(readFileSync(path, 'utf8')))
}

export function queryPanels(dashboard: GrafanaDashboard): QueryPanel[] {
  return dashboard.panels.filter((panel): panel is QueryPanel => panel.type !== 'row')
}

export function queryVariables(dashboard: GrafanaDashboard): QueryVariable[] {
  return dashboard.templating.list.filter((v): v is QueryVariable => v.type === 'query')
}

/**
 * The PromQL selector inside a Prometheus variable query: `label_values(selector, label)`
 * and `query_result(expr)` give theirs; `label_values(label)`, `label_names()` and
 * `metrics(regex)` select nothing checkable and give null.
 */
export function variableSelector(query: string): string | null {
  const call = /^\s*(\w+)\((.*)\)\s*$/s.exec(query)
  if (!call) return query
  const [, name, args = ''] = call
  if (name === 'query_result') return args
  if (name !== 'label_values') return null
  const comma = args.lastIndexOf(',')
  return comma < 0 ? null : args.slice(0, comma)
}

/** Pairs of panels whose grid rectangles overlap, by title. */
export function overlappingPanels(dashboard: GrafanaDashboard): string[] {
  const overlaps: string[] = []
  const { panels } = dashboard
  for (const [i, a] of panels.entries()) {
    for (const b of panels.slice(i + 1)) {
      const p = a.gridPos
      const q = b.gridPos
      if (p.x < q.x + q.w && q.x < p.x + p.w && p.y < q.y + q.h && q.y < p.y + p.h)
        overlaps.push(`${a.title} / ${b.title}`)
    }
  }
  return overlaps
}
