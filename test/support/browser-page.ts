import { existsSync } from 'node:fs'
import { type Browser, chromium, type Page } from 'playwright-core'

/** Debian's chromium (.ci/run installs it); playwright-core downloads no browser. */
const chromiumPath = '/usr/bin/chromium'

export interface BrowserPage {
  page: Page
  /** Console errors and uncaught exceptions of the page, as they came. */
  problems: string[]
  close(): Promise<void>
}

/**
 * A headless chromium page. The flags keep it from reaching for the network (this machine
 * has none but the loopback, and chromium's background services would log refusals).
 */
export async function openBrowserPage(): Promise<BrowserPage> {
  if (!existsSync(chromiumPath))
    throw new Error(`${chromiumPath} is missing: install Debian's chromium package (.ci/run does)`)
  const browser: Browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  const problems: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`page: ${error.message}`))
  return { page, problems, close: () => browser.close() }
}
