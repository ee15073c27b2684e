import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { detectPii } from '../../../shared/pii/detect-pii.ts'
import {
  type DatasetReport,
  evaluatePiiDataset,
  PresidioDataset,
  type PresidioSample,
} from './evaluate-pii-dataset.ts'
import { type GeneratedSample, generatePiiCorpus } from './generate-pii-corpus.ts'
import { formatRequestScan } from './measure-request-scan.ts'
import { splitPresidio } from './split-presidio.ts'

/**
 * Precision and recall of the PII detectors on presidio-research's synthetic dataset, its
 * training and held-out parts (split-presidio.ts), and on the generated corpus with its
 * decoys (generate-pii-corpus.ts).
 * Usage: npm run bench:pii [-- path/to/synth_dataset_v2.json] [--verbose]
 * By default the copy in data/pii, found from this file so any working directory works.
 */
export const defaultDatasetPath = fileURLToPath(
  new URL('../../../data/pii/presidio-synth-v2.json', import.meta.url),
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
  const { training, heldOut } = splitPresidio(samples)
  const generated = generatePiiCorpus()
  // Another seed of the same generator, first scored once the rules were final (docs/pii.md).
  const unseen = generatePiiCorpus(2026)
  const reports = {
    'Presidio training': evaluatePiiDataset(training),
    'Presidio held out': evaluatePiiDataset(heldOut),
    'generated, seed 15': evaluatePiiDataset(generated),
    'generated, seed 2026': evaluatePiiDataset(unseen),
  }
  process.stdout.write(
    [
      formatSummary(reports),
      formatReport(
        reports['Presidio training'],
        `${path}, training part (template_id % 4 != 3)`,
        verbose,
      ),
      formatReport(
        reports['Presidio held out'],
        `${path}, held out (template_id % 4 == 3)`,
        verbose,
      ),
      formatReport(evaluatePiiDataset(samples), `${path}, all`, false),
      formatReport(reports['generated, seed 15'], 'the generated corpus, seed 15', verbose),
      formatDecoys(generated),
      formatReport(reports['generated, seed 2026'], 'the generated corpus, seed 2026', verbose),
      formatDecoys(unseen),
      'The request scan the edge runs, against the detectors alone (positives labelled `pii` under each disguise):\n',
      formatRequestScan({
        'Presidio, all': samples,
        'generated, seed 15': generated,
        'generated, seed 2026': unseen,
      }),
    ].join('\n'),
  )
  return 0
}

/** Request precision / recall per type, the three evaluations side by side. */
export function formatSummary(reports: Record<string, DatasetReport>): string {
  const names = Object.keys(reports)
  const lines = [
    `| label | ${names.map((n) => `${n} P / R (n)`).join(' | ')} |`,
    `|---|${names.map(() => '---:').join('|')}|`,
  ]
  const cell = (r: DatasetReport | undefined, type: string | undefined) => {
    const t = type === undefined ? undefined : r?.types.find((x) => x.type === type)
    const s = t?.request ?? r?.overall
    if (s === undefined) return ''
    return `${f(s.precision)} / ${f(s.recall)} (${s.truePositives + s.falseNegatives})`
  }
  for (const type of [...(reports[names[0] ?? '']?.types.map((t) => t.type) ?? []), undefined])
    lines.push(
      `| ${type === undefined ? 'pii' : `pii:${type}`} | ${names.map((n) => cell(reports[n], type)).join(' | ')} |`,
    )
  return `${lines.join('\n')}\n`
}

/** Per decoy kind: how many samples got any built-in label, and which. */
export function formatDecoys(samples: readonly GeneratedSample[]): string {
  const kinds = new Map<
    string,
    { samples: number; labelled: number; labels: Set<string>; example?: string }
  >()
  for (const sample of samples) {
    if (sample.spans.length > 0) continue
    const entry = kinds.get(sample.kind) ?? { samples: 0, labelled: 0, labels: new Set<string>() }
    entry.samples++
    const labels = detectPii(sample.full_text).labels.filter((l) => l !== 'pii')
    if (labels.length > 0) {
      entry.labelled++
      for (const label of labels) entry.labels.add(label)
      entry.example ??= sample.full_text
    }
    kinds.set(sample.kind, entry)
  }
  const lines = ['| decoy | samples | labelled | as | e.g. |', '|---|---:|---:|---|---|']
  for (const [kind, e] of kinds)
    lines.push(
      `| ${kind} | ${e.samples} | ${e.labelled} | ${[...e.labels].join(', ')} | ${e.example === undefined ? '' : `\`${e.example}\``} |`,
    )
  return `${lines.join('\n')}\n`
}

const f = (n: number) => n.toFixed(3)

export function formatReport(report: DatasetReport, path: string, verbose: boolean): string {
  const lines = [
    `${report.samples} samples: ${path}`,
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
