// Helpers to script `ai/test` mock language models for loop tests.
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';

let n = 0;

export function usage(input = 10, output = 5): LanguageModelV4GenerateResult['usage'] {
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}

export function callTool(name: string, args: Record<string, unknown>, tokens?: [number, number]): LanguageModelV4GenerateResult {
  return {
    content: [{ type: 'tool-call', toolCallId: `call_${++n}`, toolName: name, input: JSON.stringify(args) }],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage: usage(...(tokens ?? [10, 5])),
    warnings: [],
  } as LanguageModelV4GenerateResult;
}

export function say(text: string): LanguageModelV4GenerateResult {
  return {
    content: [{ type: 'text', text }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: usage(),
    warnings: [],
  } as LanguageModelV4GenerateResult;
}

export type Step = LanguageModelV4GenerateResult | ((opts: LanguageModelV4CallOptions) => Promise<LanguageModelV4GenerateResult>);

/** A mock model that plays `steps` in order; past the end it calls finish. */
export function scripted(steps: Step[]): MockLanguageModelV4 {
  let i = 0;
  return new MockLanguageModelV4({
    provider: 'mock',
    modelId: 'scripted',
    doGenerate: async (opts) => {
      const s = steps[i++] ?? callTool('finish', { title: 'Done', summary: 'End of script.' });
      return typeof s === 'function' ? s(opts) : s;
    },
  });
}

/** A step that waits until the call is aborted (then rejects like fetch does). */
export function hang(): Step {
  return (opts) =>
    new Promise((_, reject) => {
      const signal = opts.abortSignal;
      const fail = () => {
        const e = new Error('This operation was aborted');
        e.name = 'AbortError';
        reject(e);
      };
      if (signal?.aborted) return fail();
      signal?.addEventListener('abort', fail, { once: true });
    });
}
