// Model registry: which provider serves a `provider/model` id, whether it is configured, and the
// AI SDK LanguageModel for it (with the configured base URLs).
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';

/** The provider settings the agent needs (Folio's config.models has this shape). */
export interface ModelsConfig {
  readonly anthropic: { readonly apiKey: string | null; readonly baseUrl: string | null };
  readonly openai: { readonly apiKey: string | null; readonly baseUrl: string | null };
  readonly openaiCompatible: { readonly baseUrl: string | null; readonly apiKey: string | null };
}

/** A sentence naming the missing setting when the model's provider is not configured; null when usable. */
export function modelConfigError(models: ModelsConfig, modelId: string): string | null {
  const provider = modelId.slice(0, modelId.indexOf('/'));
  switch (provider) {
    case 'anthropic':
      return models.anthropic.apiKey ? null : `Model "${modelId}" needs ANTHROPIC_API_KEY, which is not set on the server.`;
    case 'openai':
      return models.openai.apiKey ? null : `Model "${modelId}" needs OPENAI_API_KEY, which is not set on the server.`;
    case 'openai-compatible':
      return models.openaiCompatible.baseUrl
        ? null
        : `Model "${modelId}" needs OPENAI_COMPATIBLE_BASE_URL, which is not set on the server.`;
    default:
      return `Model "${modelId}" names an unknown provider: use anthropic/, openai/ or openai-compatible/.`;
  }
}

export class ModelConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelConfigError';
  }
}

/** Creates the language model for `provider/model`. Throws ModelConfigError when the provider is not configured. */
export function createModel(models: ModelsConfig, modelId: string): LanguageModel {
  const problem = modelConfigError(models, modelId);
  if (problem) throw new ModelConfigError(problem);
  const slash = modelId.indexOf('/');
  const provider = modelId.slice(0, slash);
  const name = modelId.slice(slash + 1);
  switch (provider) {
    case 'anthropic':
      return createAnthropic({
        apiKey: models.anthropic.apiKey ?? undefined,
        ...(models.anthropic.baseUrl ? { baseURL: models.anthropic.baseUrl } : {}),
      })(name);
    case 'openai':
      return createOpenAI({
        apiKey: models.openai.apiKey ?? undefined,
        ...(models.openai.baseUrl ? { baseURL: models.openai.baseUrl } : {}),
      })(name);
    default:
      return createOpenAICompatible({
        name: 'openai-compatible',
        baseURL: models.openaiCompatible.baseUrl as string,
        apiKey: models.openaiCompatible.apiKey ?? undefined,
        includeUsage: true,
      }).chatModel(name);
  }
}
