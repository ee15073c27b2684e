import { z } from 'zod'

/** A block's body as the HCL parser's JSON has it: arguments and nested blocks by name. */
export const BlockBody = z.record(z.string(), z.unknown())
export type BlockBody = z.infer<typeof BlockBody>

/** `variable "x" {}` and the like: one list of bodies per label. */
const LabelledBlocks = z.record(z.string(), z.array(BlockBody))

/**
 * The top level of one .tf file as the HCL parser returns it (hcl-parser.ts): every block becomes a list
 * (a label may be declared twice), expressions become "${...}" strings.
 */
export const TerraformBody = z.looseObject({
  terraform: z.array(BlockBody).optional(),
  provider: LabelledBlocks.optional(),
  variable: LabelledBlocks.optional(),
  output: LabelledBlocks.optional(),
  locals: z.array(BlockBody).optional(),
  module: LabelledBlocks.optional(),
  resource: z.record(z.string(), LabelledBlocks).optional(),
  data: z.record(z.string(), LabelledBlocks).optional(),
})
export type TerraformBody = z.infer<typeof TerraformBody>

/** The blocks of a body that are lists of bodies (nested blocks, or lists of objects). */
export function nestedBodies(value: unknown): BlockBody[] {
  if (!Array.isArray(value)) return []
  return value.filter((item): item is BlockBody => typeof item === 'object' && item !== null)
}
