/**
 * The decision log's marks of an external provider's requests, kept in shared/state so the
 * edge (workers/, which imports shared/ only) writes the same ones; re-exported here for the
 * scorer's log (control-plane/scorer/state/log-decision.ts) and its tests.
 */
export {
  externalOutcome,
  externalStrategy,
  isExternalDecision,
} from '../../shared/state/external-strategy.ts'
