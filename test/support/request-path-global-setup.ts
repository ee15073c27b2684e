import type { TestProject } from 'vitest/node'
import { type RequestPathStack, startRequestPathStack } from './request-path-stack.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    requestPathStack: RequestPathStack
  }
}

/** The workers project's global setup: the real parts the edge talks to, in Node. */
export default async function setup(project: TestProject) {
  const { stack, close } = await startRequestPathStack()
  project.provide('requestPathStack', stack)
  return close
}
