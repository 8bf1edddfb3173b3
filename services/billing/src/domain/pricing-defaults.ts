/**
 * Default prices (reference-behaviour.md, "Pricing defaults"). A model ratio of 1 is $0.002 per
 * 1K tokens ($2 per 1M). Per-call prices are in dollars.
 */
export const DEFAULT_MODEL_RATIO: Record<string, number> = {
  'gpt-4o': 1.25,
  'gpt-4o-2024-05-13': 2.5,
  'gpt-4o-2024-08-06': 1.25,
  'gpt-4o-2024-11-20': 1.25,
  'gpt-4o-mini': 0.075,
  'gpt-4o-mini-2024-07-18': 0.075,
  'gpt-4': 15,
  'gpt-4-0613': 15,
  'gpt-4-32k': 30,
  'gpt-4-32k-0613': 30,
  'gpt-4-turbo': 5,
  'gpt-4-turbo-2024-04-09': 5,
  'gpt-4.1': 1,
  'gpt-4.1-mini': 0.2,
  'gpt-4.1-nano': 0.05,
  'gpt-5': 0.625,
  'gpt-5-mini': 0.125,
  'gpt-5-nano': 0.025,
  'gpt-5-chat-latest': 0.625,
  // Current OpenAI models (names as new-api's table and Codex's picker have them; $ per 1M in/out).
  'gpt-5.4': 1.25, // $2.50 / $15
  'gpt-5.5': 2.5, // $5 / $30
  'gpt-5.6-sol': 2.5, // $5 / $30
  'gpt-5.6-terra': 1, // $2 / $12 since 30 Jul 2026
  'gpt-5.6-luna': 0.1, // $0.20 / $1.20 since 30 Jul 2026
  'gpt-6-sol': 1, // $2 / $10
  'gpt-6-luna': 0.05, // $0.10 / $0.50
  'gpt-6.1-sol': 1, // $2 / $10
  'gpt-6.1-terra': 0.5, // $1 / $5
  'chatgpt-4o-latest': 2.5,
  'gpt-3.5-turbo': 0.25,
  'gpt-3.5-turbo-0613': 0.75,
  'gpt-3.5-turbo-0125': 0.25,
  'gpt-3.5-turbo-16k': 1.5,
  'gpt-3.5-turbo-16k-0613': 1.5,
  o1: 7.5,
  'o1-mini': 0.55,
  'o3-mini': 0.55,
  o3: 1,
  'o3-pro': 10,
  'o4-mini': 0.55,
  'o1-pro': 75,
  'claude-3-haiku-20240307': 0.125,
  'claude-3-5-haiku-20241022': 0.4,
  'claude-3-5-sonnet-20240620': 1.5,
  'claude-3-5-sonnet-20241022': 1.5,
  'claude-3-5-sonnet': 1.5,
  'claude-3-opus-20240229': 7.5,
  'claude-3-7-sonnet-20250219': 1.5,
  'claude-3-7-sonnet': 1.5,
  'claude-3-5-haiku': 0.4,
  'claude-sonnet-4': 1.5,
  'claude-sonnet-4-5': 1.5,
  'claude-opus-4': 7.5,
  'claude-opus-4-1': 7.5,
  'claude-opus-4-5': 2.5,
  'claude-haiku-4-5': 0.5,
  // Current Anthropic models (Anthropic's model pages; Opus 4.6-4.8 as new-api has them).
  'claude-opus-4-6': 2.5,
  'claude-opus-4-7': 2.5,
  'claude-opus-4-8': 2.5,
  'claude-sonnet-4-6': 1.5, // $3 / $15
  'claude-sonnet-5': 1, // $2 / $10
  'claude-sonnet-5-5': 1, // $2 / $10
  'claude-opus-5': 2.5, // $5 / $25
  'claude-opus-5-5': 2, // $4 / $20 (Claude Code's default)
  'claude-haiku-5-5': 0.05, // $0.10 / $0.50 (prompts up to 100k tokens)
  'claude-fable-5-1': 5, // $10 / $50
  'gemini-1.5-pro': 0.625,
  'gemini-1.5-flash': 0.0375,
  'gemini-2.0-flash': 0.05,
  'gemini-2.5-pro': 0.625,
  'gemini-2.5-flash': 0.15,
  'gemini-2.5-flash-lite': 0.05,
  'gemini-2.0-flash-lite': 0.0375,
  'gemini-3-pro-preview': 1,
  // Current Google models (Gemini API pricing page, October 2026; prompts up to 200k tokens).
  'gemini-3-flash-preview': 0.25, // $0.50 / $3
  'gemini-3.1-pro-preview': 1, // $2 / $12
  'gemini-3.5-flash': 0.75, // $1.50 / $9
  'gemini-3.5-flash-lite': 0.15, // $0.30 / $2.50
  'gemini-3.8-flash': 0.375, // $0.75 / $3.75 through 31 Dec 2026
  // new-api's patterns for thinking-budget names (pricing.ts matches `*`).
  'gemini-2.5-flash-thinking-*': 0.15,
  'gemini-2.5-pro-thinking-*': 0.625,
  'gemini-embedding-001': 0.075,
  'deepseek-chat': 0.135,
  'deepseek-reasoner': 0.275,
  'moonshot-v1-8k': 1,
  'moonshot-v1-32k': 2,
  'moonshot-v1-128k': 5,
  'qwen-turbo': 0.15,
  'qwen-plus': 0.4,
  'qwen-max': 1.2,
  'glm-4': 7.143,
  'glm-4v': 7.143,
  'command-r': 0.25,
  'command-r-plus': 1.5,
  'mistral-large-latest': 1,
  'mistral-small-latest': 0.1,
  'mistral-medium-latest': 0.2,
  'codestral-latest': 0.15,
  'command-a': 1.25,
  'kimi-k2': 0.3,
  'glm-4.5': 0.3,
  'qwen3-max': 0.6,
  'yi-large': 1.5,
  'text-embedding-3-small': 0.01,
  'text-embedding-3-large': 0.065,
  'text-embedding-ada-002': 0.05,
  'gpt-image-1': 2.5,
  'gpt-4o-audio-preview': 1.25,
  'gpt-4o-mini-audio-preview': 0.075,
  'gpt-4o-realtime-preview': 2.5,
  'gpt-4o-mini-realtime-preview': 0.3,
  'whisper-1': 15,
  'tts-1': 7.5,
  'tts-1-hd': 15,
};

/** Completion ratios given by name; others follow completionRatioOf's rules. */
export const DEFAULT_COMPLETION_RATIO: Record<string, number> = {
  'gpt-4o': 4,
  'gpt-4o-mini': 4,
  'gpt-3.5-turbo': 3,
  'gpt-4': 2,
  'gpt-4.1': 4,
  o1: 4,
  'gemini-2.5-pro': 8,
  'gpt-image-1': 8,
  'chatgpt-4o-latest': 3,
  'mistral-medium-latest': 5,
  'codestral-latest': 3,
  'command-a': 4,
  'kimi-k2': 4.17,
  'glm-4.5': 3.67,
  'qwen3-max': 4,
  'gpt-5.4': 6,
  'gpt-5.5': 6,
  'gpt-5.6-sol': 6,
  'gpt-5.6-terra': 6,
  'gpt-5.6-luna': 6,
  'gpt-6-sol': 5,
  'gpt-6-luna': 5,
  'gpt-6.1-sol': 5,
  'gpt-6.1-terra': 5,
  'gemini-3-flash-preview': 6,
  'gemini-3.1-pro-preview': 6,
  'gemini-3.5-flash': 6,
  'gemini-3.5-flash-lite': 8.33,
  'gemini-3.8-flash': 5,
  'gemini-2.5-flash-thinking-*': 8.33,
  'gemini-2.5-pro-thinking-*': 8,
};

export const DEFAULT_MODEL_PRICE: Record<string, number> = {
  'dall-e-3': 0.04,
  mj_imagine: 0.1,
  mj_variation: 0.1,
  mj_reroll: 0.1,
  mj_blend: 0.1,
  mj_describe: 0.05,
  mj_upscale: 0.05,
  suno_music: 0.1,
  suno_lyrics: 0.01,
};

/**
 * The completion ratio of a model: an explicit entry wins, else the family rules of the
 * reference (gpt-4o 4, gpt-3.5 3, gpt-4 2, o1/o3 4, claude-3 and later 5, gemini-2.5-pro 8), else 1.
 */
export function completionRatioOf(model: string, explicit: Record<string, number>): number {
  const hit = explicit[model];
  if (typeof hit === 'number') return hit;
  const m = model.toLowerCase();
  if (m.startsWith('gpt-4o') || m.startsWith('gpt-4.1') || m.startsWith('gpt-4-turbo')) return 4;
  if (m.startsWith('gpt-3.5')) return m.endsWith('0613') || m.includes('16k') ? 4 / 3 : 3;
  if (m.startsWith('gpt-4')) return 2;
  if (/^o\d/.test(m)) return 4;
  if (m.startsWith('gpt-5')) return 8;
  if (m.startsWith('claude-3') || /^claude-(sonnet|opus|haiku|fable)-\d/.test(m)) return 5;
  if (m.startsWith('gemini-3-pro')) return 6;
  if (m.startsWith('gemini-2.5-pro')) return 8;
  if (m.startsWith('gpt-image-1')) return 8;
  if (m.startsWith('gemini-2.5-flash')) return m.includes('lite') ? 4 : 8.33;
  if (m.startsWith('gemini')) return 4;
  if (m.startsWith('deepseek-chat')) return 2;
  if (m.startsWith('deepseek-reasoner')) return 4;
  return 1;
}

/** A token-kind ratio: the option's entry for the model wins, else the family rule (lower-cased name). */
type KindRule = (model: string, explicit: Record<string, number>) => number | undefined;
const explicitOr =
  (family: (m: string) => number | undefined): KindRule =>
  (model, explicit) => {
    const hit = explicit[model];
    return typeof hit === 'number' ? hit : family(model.toLowerCase());
  };

/**
 * What a cached prompt token (a cache read) costs relative to a text prompt token, by provider
 * family: OpenAI's cached input is half the input price (a quarter from gpt-4.1 and o3/o4 on),
 * Anthropic's cache reads a tenth, Gemini's context cache a quarter, DeepSeek's cache hits a
 * tenth. An explicit entry (option CacheRatio) wins; undefined means the full prompt price.
 */
export const cacheRatioOf = explicitOr((m) => {
  if (m.startsWith('gpt-4.1') || /^o[34]/.test(m)) return m.startsWith('o3-mini') ? 0.5 : 0.25;
  // GPT-6.1 Terra and Sol: $0.05 of $1 and $0.10 of $2; Claude Opus 5.5: $0.20 of $4.
  if (m.startsWith('gpt-6.1') || m.startsWith('claude-opus-5-5')) return 0.05;
  if (m.startsWith('gpt-6')) return 0.1;
  if (m.startsWith('gemini-3')) return 0.1;
  if (m.startsWith('gpt-4o') || /^o1/.test(m)) return 0.5;
  if (m.startsWith('gpt-5')) return 0.1;
  if (m.startsWith('claude')) return 0.1;
  if (m.startsWith('gemini-2')) return 0.25;
  if (m.startsWith('deepseek')) return 0.1;
  return undefined;
});

/**
 * Prompt tokens written to a cache for 5 minutes (Anthropic, and OpenAI from GPT-5.6 on: 1.25 times
 * the input price); option CreateCacheRatio (formerly CacheCreationRatio) wins. A 1-hour write
 * costs 1.6 times that (new-api's 6 / 3.75: Anthropic's 2x input against 1.25x).
 */
export const cacheCreationRatioOf = explicitOr((m) =>
  m.startsWith('claude') || m.startsWith('gpt-5.6') || m.startsWith('gpt-6') ? 1.25 : undefined,
);

/**
 * Audio input tokens relative to text prompt tokens of the same model (OpenAI audio and realtime
 * models: $40 per 1M audio input against $2.50 text for gpt-4o-audio-preview); option AudioRatio wins.
 */
export const audioRatioOf = explicitOr((m) => {
  if (m.startsWith('gpt-4o-mini-audio')) return 66.67;
  if (m.startsWith('gpt-4o-mini-realtime')) return 16.67;
  if (m.startsWith('gpt-4o-audio')) return 16;
  if (m.startsWith('gpt-4o-realtime')) return 8;
  return undefined;
});

/** Audio output tokens relative to audio input tokens (2 for OpenAI's audio models); option AudioCompletionRatio wins. */
export const audioCompletionRatioOf = explicitOr((m) => (/^gpt-4o-(mini-)?(audio|realtime)/.test(m) ? 2 : undefined));

/** Image input tokens relative to text prompt tokens (gpt-image-1: $10 against $5 per 1M); option ImageRatio wins. */
export const imageRatioOf = explicitOr((m) => (m.startsWith('gpt-image-1') ? 2 : undefined));
