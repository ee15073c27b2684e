import { z } from 'zod'

/** A share from 0 to 1, as several strategies' parameters take one. */
export const fraction = z.number().min(0).max(1)
