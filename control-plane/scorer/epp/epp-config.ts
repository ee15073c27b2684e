import { z } from 'zod'
import { defaultMaxBodyBytes } from './ext-proc-server.ts'

/** The scorer as a gateway's Endpoint Picker (kinfctl scorer --epp-port): off when null. */
export const EppConfig = z.strictObject({
  host: z.string().default('127.0.0.1'),
  /** 0: a free port. */
  port: z.int().min(0).max(65_535),
  /**
   * The certificate and key files it presents (PEM). Gateways dial an Endpoint Picker over
   * TLS without verifying it; null serves plaintext gRPC (h2c), for a gateway configured so.
   */
  tls: z
    .strictObject({ certFile: z.string().min(1), keyFile: z.string().min(1) })
    .nullable()
    .default(null),
  /** A plaintext port serving only gRPC health (kubelet probes, GKE's checks); null: none. */
  healthPort: z.int().min(0).max(65_535).nullable().default(null),
  /** The largest request body it reads to pick (a larger one is answered 413). */
  maxBodyBytes: z.int().positive().default(defaultMaxBodyBytes),
})
export type EppConfig = z.infer<typeof EppConfig>
export type EppConfigInput = z.input<typeof EppConfig>
