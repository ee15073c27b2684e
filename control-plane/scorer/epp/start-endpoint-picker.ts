import { readFile } from 'node:fs/promises'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { LivePools } from '../pools/live-pools.ts'
import type { ScorerContext } from '../serving/inference-context.ts'
import type { EppConfig } from './epp-config.ts'
import { type ExtProcServer, startExtProcServer } from './ext-proc-server.ts'
import { scorerEndpointPicker } from './scorer-endpoint-picker.ts'

/** Starts the Endpoint Picker's gRPC server on the scorer's pools. */
export async function startEndpointPicker(
  config: EppConfig,
  context: ScorerContext,
  live: LivePools,
): Promise<ExtProcServer> {
  const tls = config.tls === null ? null : await readPair(config.tls)
  return startExtProcServer({
    host: config.host,
    port: config.port,
    tls,
    healthPort: config.healthPort,
    picker: scorerEndpointPicker(context, live),
    maxBodyBytes: config.maxBodyBytes,
    log: context.log,
  })
}

async function readPair(files: { certFile: string; keyFile: string }) {
  const read = (file: string) =>
    readFile(file).catch((error: Error) => {
      throw new KinfError('invalid_config', `epp TLS: cannot read ${file}: ${error.message}`)
    })
  return { certPem: await read(files.certFile), keyPem: await read(files.keyFile) }
}
