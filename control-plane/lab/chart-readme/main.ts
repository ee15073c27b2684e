import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { type ChartFacts, renderChartReadme } from './render-chart-readme.ts'

// npm run chart-readme: writes infra/helm/kinference/README.md from its values.yaml and
// Chart.yaml; with --check, writes nothing and exits 1 when the README is out of date.

const chartDir = 'infra/helm/kinference'
const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as ChartFacts
const readme = renderChartReadme(
  {
    name: chart.name,
    version: String(chart.version),
    appVersion: String(chart.appVersion),
    description: String(chart.description).trim(),
  },
  readFileSync(join(chartDir, 'values.yaml'), 'utf8'),
)
const file = join(chartDir, 'README.md')
if (process.argv.includes('--check')) {
  const current = readFileSync(file, 'utf8')
  if (current !== readme) {
    process.stderr.write(`${file} is out of date: run npm run chart-readme\n`)
    process.exit(1)
  }
} else {
  writeFileSync(file, readme)
  process.stdout.write(`wrote ${file}\n`)
}
