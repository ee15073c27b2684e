import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Shared, noisy machines: tests check behaviour, never wall-clock time.
    testTimeout: 30_000,
  },
})
