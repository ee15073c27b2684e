import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { renderOutput } from '../../../control-plane/kinfctl/commands/render-output.ts'
import { createRedisStateStore } from '../../../control-plane/state/redis-state-store.ts'
import { decisionViewOf } from '../../../control-plane/status-page/state-status-source.ts'
import { joinDecisions } from '../../../shared/state/decision-entry.ts'
import { escapeControls } from '../../../shared/state/escape-controls.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { runCli } from '../../support/run-cli.ts'
import { decided, ended } from '../../support/state-store-conformance.ts'

const { redis, uniquePrefix } = useRedisTestNamespaces()

/**
 * Anything a terminal may act on (C0 but the newlines between lines, DEL, C1), or a line
 * a logged field would have forged.
 */
const rawControl = /[^\n\x20-\x7e\xa0-\u{10ffff}]|\n {2}- forged/u

/** Logged text carrying escape sequences: ESC (C0), CSI and NEL (C1), DEL, a tab. */
const hostile = {
  tenant: 'acme\u001b]0;owned\u0007\u001b[2J\n  - forged: line',
  rule: 'rule\u009b31m',
  backend: 'back\u0085end',
  pod: 'pod\u007f-0',
  outcome: 'done\tnow',
}

async function logWithControls(): Promise<string> {
  const prefix = uniquePrefix()
  const state = await createRedisStateStore({ redis, prefix })
  const now = Date.now()
  await state.appendDecisions([
    decided('edge-1', now - 1_000, {
      tenant: hostile.tenant,
      rule: hostile.rule,
      backend: hostile.backend,
      pod: hostile.pod,
    }),
    ended('edge-1', now - 900, { pod: hostile.pod, outcome: hostile.outcome }),
  ])
  return prefix
}

const inspect = (prefix: string, ...args: string[]) =>
  runCli(['inspect', 'decisions', '--prefix', prefix, ...args], '', {
    env: { REDIS_URL: redisUrl },
  })

describe('kinfctl inspect decisions prints no control character from the log raw', () => {
  it('table: each written out as \\xHH', async () => {
    const prefix = await logWithControls()
    const { code, stdout } = await inspect(prefix)
    expect(code).toBe(0)
    expect(stdout).not.toMatch(rawControl)
    expect(stdout).toContain('acme\\x1b]0;owned\\x07\\x1b[2J\\x0a  - forged: line')
    expect(stdout).toContain('rule\\x9b31m')
    expect(stdout).toContain('pod\\x7f-0')
    expect(stdout).toContain('done\\x09now')
  })

  it('json and yaml: escaped in the text, the same values once parsed', async () => {
    const prefix = await logWithControls()
    const readers: [string, (text: string) => unknown][] = [
      ['json', (text) => JSON.parse(text)],
      ['yaml', (text) => parse(text)],
    ]
    for (const [format, read] of readers) {
      const { code, stdout } = await inspect(prefix, '-o', format)
      expect(code, format).toBe(0)
      expect(stdout, format).not.toMatch(rawControl)
      const [decision] = (read(stdout) as { decisions: Record<string, unknown>[] }).decisions
      expect(decision, format).toMatchObject({
        requestId: 'edge-1',
        tenant: hostile.tenant,
        rule: hostile.rule,
        backend: hostile.backend,
        pod: hostile.pod,
        end: { outcome: hostile.outcome },
      })
    }
  })

  it('--follow, in every format', async () => {
    const prefix = await logWithControls()
    for (const format of ['table', 'json', 'yaml']) {
      const { code, stdout } = await runCli(
        [
          'inspect',
          'decisions',
          '--follow',
          '--interval',
          '50ms',
          '--prefix',
          prefix,
          '-o',
          format,
        ],
        '',
        {
          env: { REDIS_URL: redisUrl },
          interrupted: () => new Promise((resolve) => setTimeout(resolve, 200)),
        },
      )
      expect(code, format).toBe(0)
      expect(stdout, format).toContain('edge-1')
      expect(stdout, format).not.toMatch(rawControl)
    }
  })
})

describe('renderOutput', () => {
  it('escapes control characters in cells and notes, whatever the view', () => {
    const text = renderOutput(
      { data: {}, columns: ['NAME'], rows: [['a\u001bb\u0085']], notes: ['note\u009b'] },
      'table',
    )
    expect(text).toBe('NAME\na\\x1bb\\x85\nnote\\x9b\n')
  })
})

describe('the status page’s decisions', () => {
  it('carry no control character from the log, and are keyed by the request id', () => {
    const now = Date.now()
    const [decision] = joinDecisions([
      { id: `${now}-0`, entry: decided('edge-1', now, { ...hostile, clientRequestId: 'same' }) },
      {
        id: `${now}-1`,
        entry: ended('edge-1', now, { pod: hostile.pod, outcome: hostile.outcome }),
      },
    ])
    if (!decision) throw new Error('no decision joined')
    const view = decisionViewOf(decision)
    expect(view.id).toBe('edge-1')
    expect(JSON.stringify(view)).not.toMatch(/\\u00[01][0-9a-f]|[\u007f-\u009f]/)
    expect(view.tenant).toBe(escapeControls(hostile.tenant))
    expect(view.outcome).toBe('done\\x09now')
  })
})
