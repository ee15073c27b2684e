import { parseArgs } from 'node:util'
import { type CliIo, exitCode, UsageError } from '../cli-io.ts'
import { formatJson, formatText, validateInputs } from '../validation-report.ts'

export const validateUsage = `Usage: kinfctl validate [options] <file|folder|->...

Validates Kinference resources (multi-document YAML or JSON; folders are read
recursively) against their schemas and against each other: references, duplicate
names, unreachable rules and locality constraints. A pool's tokenizer is a built-in
name or the path of a Hugging Face model directory; a path that exists here is loaded
as the scorer loads it (tokenizer.json, tokenizer_config.json, the chat template), one
that does not (a volume only the scorer mounts) is a warning. Resources of other API
groups are skipped. Exit status: 0 all valid (warnings or not), 1 anything invalid,
2 usage error.

Options:
  -o, --output text|json   output format (default text)
      --summary            print a summary line
  -v, --verbose            also list valid and skipped resources
  -n, --namespace NAME     namespace of resources that do not name one (default "default")
`

export async function validateCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      output: { type: 'string', short: 'o', default: 'text' },
      summary: { type: 'boolean', default: false },
      verbose: { type: 'boolean', short: 'v', default: false },
      namespace: { type: 'string', short: 'n', default: 'default' },
    },
  })
  if (values.output !== 'text' && values.output !== 'json') {
    throw new UsageError(`--output must be text or json, not "${values.output}"`)
  }
  if (positionals.length === 0) throw new UsageError('no files or folders given')
  const report = await validateInputs(positionals, values.namespace, io.readStdin)
  if (values.output === 'json') io.stdout(formatJson(report))
  else io.stdout(formatText(report, { summary: values.summary, verbose: values.verbose }))
  const { invalid, errors } = report.summary
  return invalid > 0 || errors > 0 ? exitCode.invalid : exitCode.ok
}
