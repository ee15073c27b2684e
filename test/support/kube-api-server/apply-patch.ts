import { applyJsonPatch, JsonPatchApplyError, JsonPatchSyntaxError } from './json-patch.ts'
import { badRequest, KubeError } from './kube-error.ts'
import { isRecord, type KubeObject } from './kube-object.ts'
import { applyMergePatch, applyStrategicMergePatch } from './merge-patch.ts'

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply'

/** The patched object, or the Status errors the real server answers for bad patches. */
export function applyPatch(patchType: PatchType, current: KubeObject, patch: unknown): unknown {
  if (patchType !== 'json' && !isRecord(patch)) {
    throw badRequest('a merge patch or an applied configuration must be a JSON object')
  }
  switch (patchType) {
    case 'json':
      try {
        return applyJsonPatch(current, patch)
      } catch (error) {
        if (error instanceof JsonPatchSyntaxError) throw badRequest(error.message)
        if (error instanceof JsonPatchApplyError) {
          throw new KubeError(422, 'Invalid', error.message)
        }
        throw error
      }
    case 'strategic':
      return applyStrategicMergePatch(current, patch)
    default:
      // Server-side apply is approximated: the applied configuration merged into the object.
      return applyMergePatch(current, patch)
  }
}
