import { runKinfctl } from './run-kinfctl.ts'

/** The kinfctl process: the only place that touches argv, stdio and the exit status. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

process.exitCode = await runKinfctl(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  readStdin,
  env: process.env,
  stderrIsTty: process.stderr.isTTY === true,
  untilInterrupted: () =>
    new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve())
      process.once('SIGTERM', () => resolve())
    }),
})
