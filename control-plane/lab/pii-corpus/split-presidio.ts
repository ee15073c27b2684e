import type { PresidioSample } from './evaluate-pii-dataset.ts'

/**
 * The fixed split of presidio-research's set, chosen before the held-out part was scored
 * (docs/pii.md): a sample is held out when its template_id is 3 modulo 4. Splitting by
 * template, not by sample, keeps every sentence shape on one side, so a rule fitted to a
 * training template's wording cannot score on the same wording held out.
 */
export function isHeldOut(sample: PresidioSample): boolean {
  return (sample.template_id ?? 0) % 4 === 3
}

export function splitPresidio(samples: readonly PresidioSample[]): {
  training: PresidioSample[]
  heldOut: PresidioSample[]
} {
  return {
    training: samples.filter((s) => !isHeldOut(s)),
    heldOut: samples.filter((s) => isHeldOut(s)),
  }
}
