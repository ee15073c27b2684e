import { parseArgs } from 'node:util'
import { startFakeBedrock } from './start-fake-bedrock.ts'

/**
 * node control-plane/lab/bedrock-stand-in/main.ts [--port P] [--host H]: serves the fake Bedrock
 * until Ctrl-C and prints its URL (the `endpoint` of an InferenceProvider for demos).
 */
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
  },
})
const port = Number(values.port)
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write(`--port must be a port number, not ${values.port}\n`)
  process.exit(2)
}
const fake = await startFakeBedrock({ port, host: values.host })
process.stdout.write(`${fake.url}\n`)
const stop = () => {
  fake.close().then(() => process.exit(0))
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
