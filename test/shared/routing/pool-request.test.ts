import { describe, expect, it } from 'vitest'
import { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import { anyModel, resolveModel } from '../../../shared/routing/pool-router.ts'

const spec = (models: object[]) =>
  InferencePoolSpec.parse({
    selector: { matchLabels: {} },
    targetPort: 8000,
    models,
    gpuProfile: 'generic',
  })

describe('resolveModel', () => {
  const named = {
    name: 'llama',
    tokenizer: 'llama3.1',
    maxContextTokens: 8192,
    loraAdapters: ['sql'],
  }
  const any = { name: anyModel, tokenizer: 'qwen3', maxContextTokens: 32_768 }

  it('resolves a served name and its adapters, and nothing else without "*"', () => {
    const pool = spec([named])
    expect(resolveModel(pool, 'llama')).toMatchObject({ baseModel: 'llama', loraName: null })
    expect(resolveModel(pool, 'sql')).toMatchObject({ baseModel: 'llama', loraName: 'sql' })
    expect(resolveModel(pool, 'mistral')).toBeNull()
  })

  it('serves any other name as itself on a "*" model, exact names first', () => {
    const pool = spec([named, any])
    expect(resolveModel(pool, 'llama')).toMatchObject({ tokenizer: 'llama3.1' })
    expect(resolveModel(pool, 'mistral')).toEqual({
      baseModel: 'mistral',
      loraName: null,
      tokenizer: 'qwen3',
      maxContextTokens: 32_768,
      task: null,
    })
    // "*" itself is not a model a request may name.
    expect(resolveModel(pool, anyModel)).toBeNull()
  })

  it('gives a named model its task, Generate unless it says Embed; a "*" only the one it declares', () => {
    const pool = spec([named, { ...named, name: 'bge', loraAdapters: [], task: 'Embed' }, any])
    expect(resolveModel(pool, 'llama')?.task).toBe('Generate')
    expect(resolveModel(pool, 'bge')?.task).toBe('Embed')
    // A pool of defaults says nothing of its pods' runner: they decide what they serve.
    expect(resolveModel(pool, 'mistral')?.task).toBeNull()
    expect(resolveModel(spec([{ ...any, task: 'Embed' }]), 'mistral')?.task).toBe('Embed')
  })
})
