#!/usr/bin/env node
// Launcher for `npx kinfctl`: kinfctl is TypeScript run by Node's type stripping (Node 24).
const [major] = process.versions.node.split('.').map(Number)
if (major < 24) {
  process.stderr.write(
    `kinfctl needs Node.js 24 or later (this is ${process.version}). Run it through npx or npm scripts inside the project, which use the Node 24 the project installs.\n`,
  )
  process.exit(2)
}
await import('./main.ts')
