import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { parseArgs } from 'node:util'
import { canonicalJson } from '../../../shared/config/canonical-json.ts'
import { compileSnapshot } from '../../../shared/config/compile-snapshot.ts'
import { formatFieldPath } from '../../../shared/config/config-issue.ts'
import { type CliIo, exitCode, UsageError } from '../cli-io.ts'
import { formatText, formatWarnings, validateInputs } from '../validation-report.ts'

export const compileUsage = `Usage: kinfctl compile [options] <file|folder|->...

Validates the resources (as kinfctl validate does), then writes the runtime
config snapshot the edge and the scorer load: versioned, content-hashed JSON.
Pods (v1) and EndpointSlices (discovery.k8s.io/v1) among the input give each pool its
endpoints, resolved as kinfctl controller resolves them in a cluster: ready,
non-terminating slice endpoints whose Pod the pool's selector matches.
Exit status: 0 written, 1 invalid input, 2 usage error.

Options:
      --out FILE           where to write the snapshot (default: standard output)
  -o, --output json        output format (json, the only one: the snapshot is JSON); -o is
                           the format in every command, so "-o FILE" is refused: use --out
  -n, --namespace NAME     namespace of resources that do not name one (default "default")
`

export async function compileCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      output: { type: 'string', short: 'o', default: 'json' },
      namespace: { type: 'string', short: 'n', default: 'default' },
    },
  })
  checkFormat(values.output)
  if (positionals.length === 0) throw new UsageError('no files or folders given')
  const report = await validateInputs(positionals, values.namespace, io.readStdin)
  if (report.summary.invalid > 0 || report.summary.errors > 0) {
    io.stderr(formatText(report, { summary: true, verbose: false }))
    return exitCode.invalid
  }
  io.stderr(formatWarnings(report))
  if (report.valid.length === 0) {
    io.stderr('kinfctl compile: no Kinference resources found in the input\n')
    return exitCode.invalid
  }
  const result = await compileSnapshot(report.valid, values.namespace, report.workloads)
  if (!result.ok) {
    // validateInputs already ran the same checks; this only guards against drift between them.
    for (const issue of result.issues)
      io.stderr(`${formatFieldPath(issue.path)}: ${issue.message}\n`)
    return exitCode.invalid
  }
  const { snapshot } = result
  const text = `${canonicalJson(snapshot, 2)}\n`
  if (values.out === undefined || values.out === '-') io.stdout(text)
  else {
    await mkdir(dirname(values.out), { recursive: true })
    await writeFile(values.out, text)
  }
  const count = (record: object) => Object.keys(record).length
  const endpoints = Object.values(snapshot.endpoints).reduce((sum, list) => sum + list.length, 0)
  io.stderr(
    `compiled ${count(snapshot.pools)} pools, ${count(snapshot.workerSets)} worker sets, ${count(snapshot.providers)} providers, ${count(snapshot.backends)} backends, ${count(snapshot.policies)} policies (${count(snapshot.tenants)} tenants), ${endpoints} endpoints into ${values.out === undefined || values.out === '-' ? 'standard output' : values.out}: ${snapshot.hash}\n`,
  )
  return exitCode.ok
}

/**
 * -o was compile's output file until it came to mean the format in every command: an old
 * "-o snapshot.json" is refused, naming the option that writes a file, rather than taken
 * as a format or as a file named "json".
 */
function checkFormat(format: string): void {
  if (format === 'json') return
  throw new UsageError(
    `-o/--output is the output format (json), not a file: to write the snapshot to ${format === '-' ? 'standard output, leave it out' : `${format}, use --out ${format}`}`,
  )
}
