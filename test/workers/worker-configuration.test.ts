import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const scripts = JSON.parse(readFileSync(`${root}package.json`, 'utf8')).scripts as Record<
  string,
  string
>

describe('workers/worker/worker-configuration.d.ts', () => {
  it('is what npm run cf-typegen generates from wrangler.toml', async () => {
    // The script's own arguments, so the check uses exactly the flags the file is made with.
    const [command, ...args] = (scripts['cf-typegen'] ?? '').split(/\s+/)
    expect(command).toBe('wrangler')
    // --check regenerates the Env types in memory and compares their hash and the runtime
    // header (workerd version, compatibility date and flags) with the file's: offline, ~1 s.
    const result = await promisify(execFile)(
      `${root}node_modules/.bin/wrangler`,
      [...args, '--check'],
      {
        cwd: root,
        env: {
          ...process.env,
          WRANGLER_SEND_METRICS: 'false',
          CI: '1',
          // Otherwise a developer's shell variables would be typed as secrets.
          CLOUDFLARE_INCLUDE_PROCESS_ENV: 'false',
        },
      },
    ).catch((error: { stdout?: string; stderr?: string }) => ({
      stdout: `${error.stdout ?? ''}${error.stderr ?? ''}\nstale: run npm run cf-typegen`,
    }))
    expect(result.stdout).toContain('are up to date')
  })
})
