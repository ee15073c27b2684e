import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  evaluatePiiDataset,
  PresidioDataset,
} from '../../../control-plane/pii/evaluate-pii-dataset.ts'
import { defaultDatasetPath } from '../../../control-plane/pii/measure-pii.ts'

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
