import { fileURLToPath } from 'node:url'
import { cloudflareTest } from '@cloudflare/vitest-pool-workers'
import { defineConfig } from 'vitest/config'

/** Tests that run inside workerd (the Workers runtime), with wrangler.toml's bindings. */
const workerdTests = 'test/workers/**/*.workers.test.ts'

export default defineConfig({
  test: {
    // Shared, noisy machines: tests check behaviour, never wall-clock time.
    testTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: { name: 'node', include: ['test/**/*.test.ts'], exclude: [workerdTests] },
        resolve: {
          // Node lacks workerd's built-in module; the Worker entry imports it for its
          // Durable Object class, which Node tests never run.
          alias: {
            'cloudflare:workers': fileURLToPath(
              new URL('test/support/cloudflare-workers-shim.ts', import.meta.url),
            ),
          },
        },
      },
      {
        extends: true,
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              // The pool bundles its own workerd (1.20260815), which refuses wrangler.toml's
              // later date: tests run at the newest date that binary supports.
              compatibilityDate: '2026-08-22',
              // The simulated pods, scorers and Bedrock stand-in, and the OTLP collector, the
              // global setups started.
              bindings: {
                REQUEST_PATH_STACK: JSON.stringify(inject('requestPathStack')),
                OTLP_COLLECTOR: JSON.stringify(inject('otlpCollector')),
              },
            },
          })),
        ],
        test: {
          name: 'workers',
          include: [workerdTests],
          globalSetup: [
            'test/support/request-path-global-setup.ts',
            'test/support/otlp-collector-global-setup.ts',
          ],
        },
      },
    ],
  },
})
