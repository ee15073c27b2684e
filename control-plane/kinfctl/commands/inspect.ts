import { parseArgs } from 'node:util'
import { parseDuration } from '../../../shared/config/parse-duration.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { defaultKeyPrefix } from '../../../shared/protocol/key-prefix.ts'
import { snapshotChanges } from '../../../shared/state/snapshot-changes.ts'
import { readSnapshotFile } from '../../config-store/read-snapshot-file.ts'
import { TokenizerCache } from '../../scorer/serving/tokenizer-cache.ts'
import { prefixReport } from '../../state/prefix-report.ts'
import { poolMatches } from '../../state/state-reader.ts'
import { type CliIo, exitCode, UsageError } from '../cli-io.ts'
import { followDecisions } from './follow-decisions.ts'
import { inspectPrefixScope } from './inspect-prefix-scope.ts'
import { asTenantSends, readPromptRequest } from './inspect-prompt.ts'
import { type InspectSession, openInspectSession } from './inspect-session.ts'
import { decisionsView, podsView, prefixView, quotasView, snapshotView } from './inspect-views.ts'
import {
  type OutputFormat,
  parseOutputFormat,
  type Rendered,
  renderOutput,
} from './render-output.ts'

export const inspectUsage = `Usage: kinfctl inspect <pods|prefix|decisions|tenants|snapshot> [options]

Shows the state the scorer replicas, the edge and the controller share in Redis, read
there and never from a scorer:
  pods [--pool P] [--watch]          each pod, merged over the live scorer replicas: readiness,
                                     trust and drift, blocks indexed, KV usage, queue, in flight,
                                     the fitted TTFT model, last KV-event seq and its age,
                                     replays and restarts; under them each pool condition that
                                     is False (TokenizerReady: a tokenizer that cannot be loaded;
                                     TokenizationAgrees: the pods' counts differ, one example)
  prefix --model M (--prompt-file F | --messages-file F) [--tenant T]
                                     which pods hold how much of the prompt, and which pod the
                                     pool's router (the scorer's scoring) would choose and why;
                                     without --tenant the prompt is looked up unsalted, so the
                                     blocks of tenants whose prefix cache is Isolated (the
                                     default) are not counted (the report names them);
                                     --tenant: as T sends it (an Isolated tenant's cache_salt
                                     needs the edge's KINFERENCE_SIGNING_SECRET)
  decisions [--follow] [--tenant T] [--pool P] [--since 5m] [--limit N]
                                     the decision log with predicted and actual TTFT, and a
                                     summary (prediction error percentiles, hit rate)
  tenants [--watch]                  quota buckets now, per tenant and per provider account
  snapshot [--diff FILE] [--watch]   the live config version, and what changed since the
                                     previous one (or differs from a compiled FILE)

Options:
  -o, --output table|json|yaml   output format (default table)
  --redis URL                    the Redis to read (default: $REDIS_URL)
  --prefix P                     the key prefix the services use (default ${defaultKeyPrefix})
  --interval D                   how often --watch and --follow read again (default 2s)

Exit status: 0 shown, 2 usage, 3 unknown pool, tenant or model, or no Kinference state in
Redis, 5 Redis unreachable, 1 an unreadable or invalid file.
`

type Values = ReturnType<typeof parse>['values']

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      output: { type: 'string', short: 'o', default: 'table' },
      redis: { type: 'string' },
      prefix: { type: 'string', default: defaultKeyPrefix },
      interval: { type: 'string', default: '2s' },
      pool: { type: 'string' },
      tenant: { type: 'string' },
      since: { type: 'string' },
      limit: { type: 'string', default: '1000' },
      follow: { type: 'boolean', short: 'f', default: false },
      watch: { type: 'boolean', short: 'w', default: false },
      model: { type: 'string' },
      'prompt-file': { type: 'string' },
      'messages-file': { type: 'string' },
      diff: { type: 'string' },
    },
  })
}

const views = ['pods', 'prefix', 'decisions', 'tenants', 'snapshot'] as const
type View = (typeof views)[number]

export async function inspectCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args)
  const [view, ...extra] = positionals
  if (view === undefined) throw new UsageError(`name what to inspect: ${views.join(', ')}`)
  if (!views.includes(view as View)) throw new UsageError(`cannot inspect "${view}"`)
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`)
  const format = parseOutputFormat(values.output)
  const intervalMs = durationOf('--interval', values.interval)
  const url = values.redis ?? io.env.REDIS_URL
  if (!url) throw new UsageError('give --redis URL or set REDIS_URL')
  checkOptions(view as View, values)
  const session = await openInspectSession(url, values.prefix)
  try {
    const context = { session, values, format, intervalMs, io }
    if (view === 'decisions') return await decisions(context)
    const render = renderer(view as Exclude<View, 'decisions'>, session, values, io.env)
    io.stdout(renderOutput(await render(), format))
    if (values.watch) await watch(context, render)
    return exitCode.ok
  } finally {
    await session.close()
  }
}

interface Context {
  session: InspectSession
  values: Values
  format: OutputFormat
  intervalMs: number
  io: CliIo
}

/** Options only where they mean something, so a typo'd combination is not silently ignored. */
function checkOptions(view: View, values: Values): void {
  const allowed: Record<View, readonly string[]> = {
    pods: ['pool', 'watch'],
    prefix: ['model', 'prompt-file', 'messages-file', 'tenant'],
    decisions: ['follow', 'tenant', 'pool', 'since', 'limit'],
    tenants: ['watch'],
    snapshot: ['diff', 'watch'],
  }
  const given = ['pool', 'tenant', 'since', 'model', 'prompt-file', 'messages-file', 'diff']
    .filter((name) => values[name as keyof Values] !== undefined)
    .concat(values.follow ? ['follow'] : [], values.watch ? ['watch'] : [])
  const stray = given.find((name) => !allowed[view].includes(name))
  if (stray) throw new UsageError(`--${stray} does not apply to inspect ${view}`)
}

function durationOf(flag: string, text: string): number {
  const ms = parseDuration(text)
  if (ms === null || ms <= 0)
    throw new UsageError(`${flag} must be a duration like 500ms, 30s, 5m or 1h, not "${text}"`)
  return ms
}

function renderer(
  view: Exclude<View, 'decisions'>,
  session: InspectSession,
  values: Values,
  env: CliIo['env'],
): () => Promise<Rendered> {
  const { reader } = session
  if (view === 'pods')
    return async () => {
      const filter = values.pool === undefined ? {} : { pool: values.pool }
      const [all, pools] = await Promise.all([pods(session, values.pool), reader.pools(filter)])
      return podsView(all, pools, Date.now())
    }
  if (view === 'tenants') return async () => quotasView(await reader.quotas())
  if (view === 'snapshot')
    return async () => {
      const report = await reader.snapshot()
      if (values.diff === undefined) return snapshotView(report, null)
      const file = await readSnapshotFile(values.diff)
      return snapshotView(report, {
        against: values.diff,
        changes: snapshotChanges(file.snapshot, report.snapshot),
      })
    }
  return async () => {
    if (values.model === undefined) throw new UsageError('inspect prefix needs --model M')
    const read = await readPromptRequest(values.model, values)
    const [snapshot, all] = await Promise.all([reader.snapshot(), pods(session, undefined)])
    const request =
      values.tenant === undefined
        ? read
        : await asTenantSends(read, snapshot.snapshot, values.tenant, env.KINFERENCE_SIGNING_SECRET)
    const report = await prefixReport(
      {
        snapshot: snapshot.snapshot,
        pods: all,
        index: await session.index(),
        tokenizer: tokenizerOf(new TokenizerCache()),
        wallMs: Date.now(),
      },
      request,
    )
    return prefixView(report, inspectPrefixScope(snapshot.snapshot, values.tenant))
  }
}

/** A pool's tokenizer, loaded here; one that cannot be is the command's error, said so. */
function tokenizerOf(cache: TokenizerCache) {
  return (source: string) => {
    const entry = cache.get(source)
    if (entry.ok) return entry.tokenizer
    throw new KinfError(
      'invalid_config',
      `the pool's tokenizer ${source} cannot be loaded here (the scorer routes it on load alone if it cannot either): ${entry.error.message}`,
    )
  }
}

/** The merged pods (of one pool); not_found when no replica wrote any, or the pool is unknown. */
async function pods(session: InspectSession, pool: string | undefined) {
  const all = await session.reader.pods()
  if (all.length === 0)
    throw new KinfError(
      'not_found',
      `${session.where}: no scorer replica has written pod state recently (is one running with this Redis and prefix?)`,
    )
  if (pool === undefined) return all
  const matching = all.filter((p) => poolMatches(p.pool, pool))
  if (matching.length === 0) {
    const known = [...new Set(all.map((p) => p.pool))].join(', ')
    throw new KinfError('not_found', `unknown pool "${pool}" (pools with pods: ${known})`)
  }
  return matching
}

async function decisions(context: Context): Promise<number> {
  const { session, values } = context
  const limit = Number(values.limit)
  if (!Number.isInteger(limit) || limit < 1)
    throw new UsageError('--limit must be a positive integer')
  const sinceMs =
    values.since === undefined ? undefined : Date.now() - durationOf('--since', values.since)
  await checkFilters(session, values)
  const filter = {
    ...(values.tenant === undefined ? {} : { tenant: values.tenant }),
    ...(values.pool === undefined ? {} : { pool: values.pool }),
  }
  const report = await session.reader.decisions({
    ...filter,
    ...(sinceMs === undefined ? {} : { sinceMs }),
    count: limit,
  })
  if (!values.follow) {
    context.io.stdout(renderOutput(decisionsView(report.decisions, report.summary), context.format))
    return exitCode.ok
  }
  await followDecisions({
    ...context,
    report,
    filter,
    ...(sinceMs === undefined ? {} : { sinceMs }),
  })
  return exitCode.ok
}

/** --tenant and --pool must name something the live snapshot (or the pods) knows. */
async function checkFilters(session: InspectSession, values: Values): Promise<void> {
  if (values.tenant === undefined && values.pool === undefined) return
  const snapshot = await session.reader.snapshot().catch(() => null)
  if (
    values.tenant !== undefined &&
    snapshot &&
    !Object.hasOwn(snapshot.snapshot.tenants, values.tenant)
  ) {
    const known = Object.keys(snapshot.snapshot.tenants).join(', ')
    throw new KinfError('not_found', `unknown tenant "${values.tenant}" (tenants: ${known})`)
  }
  if (values.pool === undefined) return
  const pools = new Set([
    ...(snapshot ? Object.keys(snapshot.snapshot.pools) : []),
    ...(await session.reader.pods()).map((p) => p.pool),
  ])
  const known = [...pools].some((id) => poolMatches(id, values.pool))
  if (!known)
    throw new KinfError(
      'not_found',
      `unknown pool "${values.pool}" (pools: ${[...pools].join(', ')})`,
    )
}

/** Renders again every interval until interrupted; documents apart in json and yaml. */
async function watch(context: Context, render: () => Promise<Rendered>): Promise<void> {
  const interrupted = context.io.untilInterrupted().then(() => 'stop' as const)
  for (;;) {
    const tick = new Promise<'tick'>((resolve) =>
      setTimeout(() => resolve('tick'), context.intervalMs),
    )
    if ((await Promise.race([tick, interrupted])) === 'stop') return
    const separator =
      context.format === 'yaml'
        ? '---\n'
        : context.format === 'table'
          ? `\n# ${new Date().toISOString()}\n`
          : ''
    context.io.stdout(separator + renderOutput(await render(), context.format))
  }
}
