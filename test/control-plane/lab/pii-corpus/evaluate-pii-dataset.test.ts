import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  evaluatePiiDataset,
  PresidioDataset,
} from '../../../../control-plane/lab/pii-corpus/evaluate-pii-dataset.ts'
import { generatePiiCorpus } from '../../../../control-plane/lab/pii-corpus/generate-pii-corpus.ts'
import { defaultDatasetPath } from '../../../../control-plane/lab/pii-corpus/measure-pii.ts'
import { splitPresidio } from '../../../../control-plane/lab/pii-corpus/split-presidio.ts'
import { detectPii } from '../../../../shared/pii/detect-pii.ts'

// The vendored dataset (data/pii); defaultDatasetPath does not depend on the working directory.
const samples = PresidioDataset.parse(JSON.parse(readFileSync(defaultDatasetPath, 'utf8')))
const report = evaluatePiiDataset(samples)

describe('the detectors on presidio-research synth_dataset_v2 (regression floor)', () => {
  it('reads all 1,500 samples', () => {
    expect(report.samples).toBe(1500)
  })

  it.each(report.types.map((t) => [t.type, t] as const))(
    'pii:%s keeps request precision and recall at or above 0.9',
    (_type, t) => {
      expect(t.samples).toBeGreaterThan(0)
      expect(t.request.precision).toBeGreaterThanOrEqual(0.9)
      expect(t.request.recall).toBeGreaterThanOrEqual(0.9)
      expect(t.span.recall).toBeGreaterThanOrEqual(0.9)
    },
  )

  it('keeps the overall pii label at or above 0.95', () => {
    expect(report.overall.precision).toBeGreaterThanOrEqual(0.95)
    expect(report.overall.recall).toBeGreaterThanOrEqual(0.95)
  })
})

describe('the split and the generated corpus (issue 15)', () => {
  it('holds out the same 353 samples every time, by template', () => {
    const { training, heldOut } = splitPresidio(samples)
    expect([training.length, heldOut.length]).toEqual([1147, 353])
    const heldTemplates = new Set(heldOut.map((s) => s.template_id))
    expect(training.some((s) => heldTemplates.has(s.template_id))).toBe(false)
  })

  it('generates the same corpus from the same seed, another from another', () => {
    expect(generatePiiCorpus(15)).toEqual(generatePiiCorpus(15))
    expect(generatePiiCorpus(2026)[0]).not.toEqual(generatePiiCorpus(15)[0])
  })

  it.each([15, 2026])(
    'seed %i: every type at precision and recall 0.99, no decoy labelled',
    (seed) => {
      const corpus = generatePiiCorpus(seed)
      const generated = evaluatePiiDataset(corpus)
      for (const t of generated.types) {
        expect(t.request.precision, t.type).toBeGreaterThanOrEqual(0.99)
        expect(t.request.recall, t.type).toBeGreaterThanOrEqual(0.99)
      }
      const labelled = corpus.filter(
        (s) => s.spans.length === 0 && detectPii(s.full_text).labels.length > 0,
      )
      expect(labelled.map((s) => s.full_text)).toEqual([])
    },
  )
})

describe('evaluatePiiDataset', () => {
  it('counts at request level, out-of-scope PII as negatives', () => {
    const small = evaluatePiiDataset([
      {
        full_text: 'mail a@b.io',
        spans: [
          {
            entity_type: 'EMAIL_ADDRESS',
            entity_value: 'a@b.io',
            start_position: 5,
            end_position: 11,
          },
        ],
      },
      {
        full_text: 'I am Jane, card 4111 1111 1111 1111',
        spans: [
          { entity_type: 'PERSON', entity_value: 'Jane', start_position: 5, end_position: 9 },
        ],
      },
      {
        full_text: 'call me at some point',
        spans: [
          {
            entity_type: 'PHONE_NUMBER',
            entity_value: 'some',
            start_position: 11,
            end_position: 15,
          },
        ],
      },
    ])
    const email = small.types.find((t) => t.type === 'email')
    const card = small.types.find((t) => t.type === 'card')
    const phone = small.types.find((t) => t.type === 'phone')
    expect(email?.request).toMatchObject({ truePositives: 1, falsePositives: 0, falseNegatives: 0 })
    expect(card?.request).toMatchObject({ truePositives: 0, falsePositives: 1, precision: 0 })
    expect(phone?.request).toMatchObject({ falseNegatives: 1, recall: 0 })
    expect(small.overall).toMatchObject({ truePositives: 1, falsePositives: 1, falseNegatives: 1 })
  })
})
