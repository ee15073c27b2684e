import type { BenchmarkReportEntry } from './write-benchmark-reports.ts'

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

const round = (value: number) => Number(value.toPrecision(12))
const label = (value: number) => {
  const abs = Math.abs(value)
  if (abs >= 10_000) return `${round(value / 1000)}k`
  return String(round(value))
}
const at = (value: number) => value.toFixed(1)

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

function drawPanel(
  index: number,
  title: string,
  unit: string,
  series: readonly Series[],
  value: (point: Series['points'][number]) => number,
  axis: ReturnType<typeof xAxis>,
): string[] {
  const left = index * panel.width + panel.left
  const right = (index + 1) * panel.width - panel.right
  const bottom = height - panel.bottom
  const ticks = niceTicks(Math.max(0, ...series.flatMap((s) => s.points.map(value))))
  const yMax = ticks.at(-1) ?? 1
  const px = (fraction: number) => left + fraction * (right - left)
  const py = (v: number) => bottom - (v / yMax) * (bottom - panel.top)
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
 * A chart of one workload as a standalone SVG: median TTFT (successful requests) and mean
 * output throughput against the rate, one line per router, a shared legend. The x axis
 * is numeric when every run has a rate, else one slot per profile.
 */
export function renderBenchmarkChart(
  workload: string,
  entries: readonly BenchmarkReportEntry[],
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
  out.push(...drawPanel(0, 'Median TTFT', 'seconds', series, (p) => p.ttft, axis))
  out.push(...drawPanel(1, 'Output throughput', 'tokens/s', series, (p) => p.throughput, axis))
  out.push('</svg>', '')
  return out.join('\n')
}
