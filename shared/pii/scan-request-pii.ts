import { type CollectScanTextsOptions, collectScanTexts } from './collect-scan-texts.ts'
import type { CompiledCustomPattern } from './custom-pii-patterns.ts'
import { detectPii } from './detect-pii.ts'

export interface RequestPiiScan {
  /** detectPii's labels over everything the request carries. */
  labels: string[]
  /** Why part of the request could not be read; null when all of it was (see ScanTexts). */
  unreadable: string | null
}

/**
 * Labels a request by everything in it that could leave: each value given (the request as
 * parsed, and each translation of it a provider would be sent) is read whole, decoded and
 * normalised (collect-scan-texts.ts), and the detectors run once over the lot.
 */
export function scanRequestPii(
  values: readonly unknown[],
  options: CollectScanTextsOptions & {
    custom?: readonly CompiledCustomPattern[]
    /** The detectors (detectPii unless a test replaces them). */
    detect?: typeof detectPii
  },
): RequestPiiScan {
  const { texts, unreadable } = collectScanTexts(values, options)
  const detect = options.detect ?? detectPii
  const found = detect(texts.join('\n'), options.custom ? { custom: options.custom } : {})
  return { labels: found.labels, unreadable }
}
