import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  type DatasetReport,
  evaluatePiiDataset,
  PresidioDataset,
  type PresidioSample,
} from './evaluate-pii-dataset.ts'

/**
 * Precision and recall of the PII detectors on presidio-research's synthetic dataset.
 * Usage: npm run bench:pii [-- path/to/synth_dataset_v2.json] [--verbose]
 * By default the copy in data/pii, found from this file so any working directory works.
 */
export const defaultDatasetPath = fileURLToPath(
  new URL('../../data/pii/presidio-synth-v2.json', import.meta.url),
)

async function main(argv: string[]): Promise<number> {
  const verbose = argv.includes('--verbose')
  const path = resolve(argv.find((arg) => !arg.startsWith('--')) ?? defaultDatasetPath)
  let samples: PresidioSample[]
  try {
    samples = PresidioDataset.parse(JSON.parse(await readFile(path, 'utf8')))
  } catch (error) {
    process.stderr.write(`measure-pii: cannot read ${path}: ${(error as Error).message}\n`)
    return 1
  }
  const report = evaluatePiiDataset(samples)
  process.stdout.write(formatReport(report, path, verbose))
  return 0
}

const f = (n: number) => n.toFixed(3)

export function formatReport(report: DatasetReport, path: string, verbose: boolean): string {
  const lines = [
    `${report.samples} samples from ${path}`,
    '',
    '| Presidio entity | label | samples | request precision | request recall | FP | FN | span recall | exact spans |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const t of report.types) {
    const spans = t.span.truePositives + t.span.falseNegatives
    lines.push(
      `| ${t.entity} | pii:${t.type} | ${t.samples} | ${f(t.request.precision)} | ${f(t.request.recall)} | ${t.request.falsePositives} | ${t.request.falseNegatives} | ${f(t.span.recall)} (${t.span.truePositives}/${spans}) | ${t.exactSpans}/${spans} |`,
    )
  }
  const o = report.overall
  lines.push(
    `| any of the above | pii | ${o.truePositives + o.falseNegatives} | ${f(o.precision)} | ${f(o.recall)} | ${o.falsePositives} | ${o.falseNegatives} | | |`,
  )
  lines.push(
    '',
    'Label problems in the dataset:',
    ...(report.labelProblems.length > 0
      ? report.labelProblems.map((p) => `- ${p}`)
      : ['- none found']),
  )
  if (verbose) {
    for (const t of report.types) {
      for (const text of t.missed) lines.push(`MISSED ${t.type}: ${JSON.stringify(text)}`)
      for (const text of t.falseAlarms) lines.push(`FALSE ${t.type}: ${JSON.stringify(text)}`)
    }
  }
  return `${lines.join('\n')}\n`
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2))
