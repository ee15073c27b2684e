import type { BenchmarkReportEntry } from './benchmark-report-entry.ts'

/** Okabe–Ito colours (distinguishable with colour-blindness), then greys. */
const palette = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000']
const width = 960
const height = 440
const panel = { top: 92, bottom: 56, left: 72, right: 24, width: width / 2 }

export function escapeXml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;')
}

/** 0, step, 2·step, ... up to a round maximum ≥ max, about five ticks (steps 1, 2, 2.5, 5 × 10^k). */
export function niceTicks(max: number): number[] {
  const top = max > 0 && Number.isFinite(max) ? max : 1
  const raw = top / 5
  const magnitude = 10 ** Math.floor(Math.log10(raw))
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude
  const ticks: number[] = []
  for (let i = 0; i * step < top + step * 1e-9; i++) ticks.push(round(i * step))
  if ((ticks.at(-1) ?? 0) < top) ticks.push(round(ticks.length * step))
  return ticks
}

/**
 * Decades from the one at or below `min` to the one at or above `max`: a log axis, so
 * the cache-aware routers' sub-second TTFTs are not flattened to zero by round robin's
 * minutes. Non-positive or non-finite inputs fall back to 0.01–1.
 */
export function logTicks(min: number, max: number): number[] {
  const low = min > 0 && Number.isFinite(min) ? min : 0.01
  const high = max > 0 && Number.isFinite(max) ? Math.max(max, low) : Math.max(1, low)
  const first = Math.floor(Math.log10(low) + 1e-9)
  const last = Math.max(first + 1, Math.ceil(Math.log10(high) - 1e-9))
  return Array.from({ length: last - first + 1 }, (_, i) => round(10 ** (first + i)))
}

const round = (value: number) => Number(value.toPrecision(12))
const label = (value: number) => {
  const abs = Math.abs(value)
  if (abs >= 10_000) return `${round(value / 1000)}k`
  return String(round(value))
}
const at = (value: number) => value.toFixed(1)

/** What a panel draws beside the routers: a bound as a dashed horizontal line. */
export interface ChartBounds {
  /** Zero-queue TTFT floor (median), seconds. */
  ttftFloorS?: number | null
  /** Output tokens/s at the fluid throughput bound. */
  outputTokensPerSecond?: number | null
}

interface Scale {
  ticks: number[]
  /** 0 at the bottom of the axis, 1 at the top. */
  of: (value: number) => number
}

function linearScale(values: readonly number[]): Scale {
  const ticks = niceTicks(Math.max(0, ...values))
  const max = ticks.at(-1) ?? 1
  return { ticks, of: (v) => v / max }
}

function logScale(values: readonly number[]): Scale {
  const positive = values.filter((v) => v > 0 && Number.isFinite(v))
  const ticks = logTicks(Math.min(...positive), Math.max(...positive))
  const low = Math.log10(ticks[0] ?? 0.01)
  const span = Math.log10(ticks.at(-1) ?? 1) - low
  const floor = ticks[0] ?? 0.01
  return { ticks, of: (v) => (Math.log10(Math.max(v, floor)) - low) / span }
}

interface Series {
  router: string
  color: string
  points: { x: number; label: string; ttft: number; throughput: number }[]
}

/** The x axis: the rates when every run has one, else the profiles in order. */
function xAxis(entries: readonly BenchmarkReportEntry[]) {
  const numeric = entries.every((entry) => entry.config.rate !== null)
  const profiles = [...new Set(entries.map((entry) => entry.config.profile))]
  const kinds = new Set(entries.map((entry) => entry.config.profile.split('@')[0]))
  const title = !numeric
    ? 'Load profile'
    : [...kinds].every((kind) => kind === 'constant' || kind === 'poisson')
      ? 'Request rate (req/s)'
      : [...kinds].every((kind) => kind === 'concurrent')
        ? 'Concurrent streams'
        : 'Rate'
  if (numeric) {
    const ticks = niceTicks(Math.max(...entries.map((entry) => entry.config.rate ?? 0)))
    const max = ticks.at(-1) ?? 1
    return {
      title,
      of: (entry: BenchmarkReportEntry) => (entry.config.rate ?? 0) / max,
      ticks: ticks.map((tick) => ({ at: tick / max, text: label(tick) })),
    }
  }
  const slot = (profile: string) => (profiles.indexOf(profile) + 0.5) / profiles.length
  return {
    title,
    of: (entry: BenchmarkReportEntry) => slot(entry.config.profile),
    ticks: profiles.map((profile) => ({ at: slot(profile), text: profile })),
  }
}

function seriesOf(
  entries: readonly BenchmarkReportEntry[],
  x: (e: BenchmarkReportEntry) => number,
) {
  const routers = [...new Set(entries.map((entry) => entry.config.router))]
  return routers.map(
    (router, i): Series => ({
      router,
      color: palette[i % palette.length] as string,
      points: entries
        .filter((entry) => entry.config.router === router)
        .map((entry) => ({
          x: x(entry),
          label: entry.config.profile,
          ttft: entry.metrics.time_to_first_token_ms.successful.median / 1000,
          throughput: entry.metrics.output_tokens_per_second.successful.mean,
        }))
        .sort((a, b) => a.x - b.x),
    }),
  )
}

interface PanelSpec {
  index: number
  title: string
  unit: string
  value: (point: Series['points'][number]) => number
  log: boolean
  bound: { value: number; label: string } | null
}

function drawPanel(
  spec: PanelSpec,
  series: readonly Series[],
  axis: ReturnType<typeof xAxis>,
): string[] {
  const { index, title, unit, value, bound } = spec
  const left = index * panel.width + panel.left
  const right = (index + 1) * panel.width - panel.right
  const bottom = height - panel.bottom
  const values = [...series.flatMap((s) => s.points.map(value)), ...(bound ? [bound.value] : [])]
  const scale = spec.log ? logScale(values) : linearScale(values)
  const ticks = scale.ticks
  const px = (fraction: number) => left + fraction * (right - left)
  const py = (v: number) => bottom - scale.of(v) * (bottom - panel.top)
  const out = [`<g class="panel">`]
  out.push(
    `<text x="${at((left + right) / 2)}" y="${panel.top - 14}" text-anchor="middle" font-size="14" font-weight="600">${escapeXml(title)}</text>`,
  )
  for (const tick of ticks) {
    const y = at(py(tick))
    out.push(`<line x1="${left}" y1="${y}" x2="${right}" y2="${y}" stroke="#e5e5e5"/>`)
    out.push(
      `<text x="${left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${escapeXml(label(tick))}</text>`,
    )
  }
  for (const tick of axis.ticks) {
    const x = at(px(tick.at))
    out.push(`<line x1="${x}" y1="${bottom}" x2="${x}" y2="${bottom + 5}" stroke="#333"/>`)
    out.push(
      `<text x="${x}" y="${bottom + 18}" text-anchor="middle">${escapeXml(tick.text)}</text>`,
    )
  }
  out.push(`<line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#333"/>`)
  out.push(`<line x1="${left}" y1="${panel.top}" x2="${left}" y2="${bottom}" stroke="#333"/>`)
  out.push(
    `<text x="${at((left + right) / 2)}" y="${height - 14}" text-anchor="middle">${escapeXml(axis.title)}</text>`,
  )
  const middle = at((panel.top + bottom) / 2)
  out.push(
    `<text x="${left - 52}" y="${middle}" text-anchor="middle" transform="rotate(-90 ${left - 52} ${middle})">${escapeXml(unit)}</text>`,
  )
  if (bound) {
    const y = at(py(bound.value))
    out.push(
      `<line class="bound" x1="${left}" y1="${y}" x2="${right}" y2="${y}" stroke="#555" stroke-dasharray="6 4"/>`,
      `<text x="${right - 4}" y="${at(py(bound.value) - 6)}" text-anchor="end" fill="#555">${escapeXml(bound.label)}</text>`,
    )
  }
  for (const s of series) {
    const points = s.points.map((p) => `${at(px(p.x))},${at(py(value(p)))}`).join(' ')
    out.push(
      `<polyline class="series" data-router="${escapeXml(s.router)}" points="${points}" fill="none" stroke="${s.color}" stroke-width="2"/>`,
    )
    for (const p of s.points) {
      out.push(
        `<circle cx="${at(px(p.x))}" cy="${at(py(value(p)))}" r="3.5" fill="${s.color}"><title>${escapeXml(`${s.router} ${p.label}: ${round(value(p))} ${unit}`)}</title></circle>`,
      )
    }
  }
  out.push('</g>')
  return out
}

/**
 * A chart of one workload as a standalone SVG: median TTFT (successful requests, log
 * scale) and mean output throughput against the rate, one line per router, a shared
 * legend, and the workload's bounds as dashed lines where given. The x axis is numeric
 * when every run has a rate, else one slot per profile.
 */
export function renderBenchmarkChart(
  workload: string,
  entries: readonly BenchmarkReportEntry[],
  bounds: ChartBounds = {},
): string {
  const axis = xAxis(entries)
  const series = seriesOf(entries, axis.of)
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12" fill="#222">`,
    `<title>${escapeXml(`${workload}: median TTFT and output throughput`)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="26" text-anchor="middle" font-size="16" font-weight="700">${escapeXml(workload)}</text>`,
  ]
  let x = panel.left
  out.push('<g class="legend">')
  for (const s of series) {
    out.push(
      `<line x1="${x}" y1="48" x2="${x + 22}" y2="48" stroke="${s.color}" stroke-width="2"/>`,
    )
    out.push(`<circle cx="${x + 11}" cy="48" r="3.5" fill="${s.color}"/>`)
    out.push(`<text x="${x + 28}" y="48" dominant-baseline="middle">${escapeXml(s.router)}</text>`)
    x += 48 + 7 * s.router.length
  }
  out.push('</g>')
  const floor = bounds.ttftFloorS ?? null
  const fluid = bounds.outputTokensPerSecond ?? null
  const ttftPanel: PanelSpec = {
    index: 0,
    title: 'Median TTFT (log scale)',
    unit: 'seconds',
    value: (p) => p.ttft,
    log: true,
    bound: floor !== null && floor > 0 ? { value: floor, label: 'zero-queue floor' } : null,
  }
  const throughputPanel: PanelSpec = {
    index: 1,
    title: 'Output throughput',
    unit: 'tokens/s',
    value: (p) => p.throughput,
    log: false,
    bound: fluid !== null && fluid > 0 ? { value: fluid, label: 'fluid bound' } : null,
  }
  out.push(...drawPanel(ttftPanel, series, axis))
  out.push(...drawPanel(throughputPanel, series, axis))
  out.push('</svg>', '')
  return out.join('\n')
}
