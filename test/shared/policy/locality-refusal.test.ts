import { describe, expect, it } from 'vitest'
import { localityRefusal } from '../../../shared/policy/locality-refusal.ts'

const constraint = {
  name: 'pii-in-cluster',
  labels: ['pii'],
  locality: 'InCluster' as const,
  message: 'Ask privacy@ for exceptions.',
}
const base = { constraint, model: 'claude', labels: ['pii', 'pii:card'], detectorFailed: false }

describe('localityRefusal', () => {
  it('says a retry cannot help when no backend in the cluster serves the model', () => {
    const refusal = localityRefusal({ ...base, busy: null })
    expect(refusal).toEqual({
      status: 400,
      message:
        'Constraint pii-in-cluster keeps this request in the cluster because it carries personal data (pii, pii:card), and model claude is not served in the cluster, so retrying will not help: leave that content out, or use a model served in the cluster. Ask privacy@ for exceptions.',
    })
  })

  it('says when to retry when the cluster’s backends are busy', () => {
    const refusal = localityRefusal({ ...base, busy: 'demo/sim-local: saturated' })
    expect(refusal.status).toBe(503)
    expect(refusal.retryAfterSeconds).toBe(5)
    expect(refusal.message).toContain(
      'no backend in the cluster can take it now (demo/sim-local: saturated); retry in 5 s.',
    )
  })

  it('names what the scan could not read, or its failure, instead of labels', () => {
    const image = localityRefusal({
      ...base,
      labels: [],
      detectorFailed: true,
      unreadable: 'a content part of type image_url',
      busy: null,
    })
    expect(image.message).toContain(
      'because it carries content the personal-data scan cannot read (a content part of type image_url)',
    )
    const failed = localityRefusal({ ...base, labels: ['pii'], detectorFailed: true, busy: null })
    expect(failed.message).toContain('because the personal-data scan could not read all of it')
  })

  it('calls non-personal labels restricted content', () => {
    const refusal = localityRefusal({
      ...base,
      constraint: { ...constraint, labels: ['confidential'] },
      labels: ['confidential'],
      busy: null,
    })
    expect(refusal.message).toContain('because it carries restricted content (confidential)')
  })
})
