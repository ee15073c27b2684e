import type { EppConfigInput } from '../../scorer/epp/epp-config.ts'
import { UsageError } from '../cli-io.ts'

/** --epp-*: the Endpoint Picker's settings, or null when --epp-port is not given. */
export function eppOf(values: {
  'epp-port'?: string | undefined
  'epp-host': string
  'epp-health-port'?: string | undefined
  'epp-tls-cert'?: string | undefined
  'epp-tls-key'?: string | undefined
}): EppConfigInput | null {
  const cert = values['epp-tls-cert']
  const key = values['epp-tls-key']
  if ((cert === undefined) !== (key === undefined))
    throw new UsageError('--epp-tls-cert and --epp-tls-key go together')
  if (values['epp-port'] === undefined) {
    if (cert !== undefined || values['epp-health-port'] !== undefined)
      throw new UsageError('--epp-tls-cert, --epp-tls-key and --epp-health-port need --epp-port')
    return null
  }
  const port = portOf('--epp-port', values['epp-port'])
  const health = values['epp-health-port']
  const healthPort = health === undefined ? null : portOf('--epp-health-port', health)
  const tls = cert === undefined || key === undefined ? null : { certFile: cert, keyFile: key }
  return { host: values['epp-host'], port, healthPort, tls }
}

/** A port option's value: a port number, 0 for a free one. */
function portOf(option: string, text: string): number {
  const port = text.trim() === '' ? Number.NaN : Number(text)
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`${option} "${text}" must be a port number (0 = a free one)`)
  return port
}

/** --metrics-port: a port number (0 = a free one), or null for off. */
export function metricsPortOf(text: string): number | null {
  if (text === 'off') return null
  const port = text.trim() === '' ? Number.NaN : Number(text)
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--metrics-port "${text}" must be a port number (0 = a free one) or off`)
  return port
}
