/**
 * Prompt and completion token estimates, for pre-consume and for upstreams that report no usage.
 * OpenAI models are counted with tiktoken's o200k_base encoding (see data/tokenizer.ts: it runs
 * in a worker thread); other models get a cheap estimate (about 4 Latin characters or one CJK
 * character per token). This module only collects what to count.
 */
import type { ChatRequest } from './protocols/openai.ts';

/** Counts tokens of texts for a model (tiktoken for OpenAI models, cheap otherwise). */
export interface TokenCounter {
  /**
   * `waitMs`: how long to wait for an exact count before taking the estimate (the counter's
   * default is short: a pre-consume estimate must not slow the request down).
   */
  count(texts: string[], model: string, opts?: { waitMs?: number }): Promise<number>;
}

/** Whether a model is one of OpenAI's, counted with tiktoken. */
export function isOpenAIModel(model: string): boolean {
  return /^(gpt-|o1|o3|o4|chatgpt-|text-embedding|text-davinci|davinci|babbage|omni-moderation|text-moderation)/i.test(
    model,
  );
}

/** A cheap estimate: one token per wide (CJK etc.) character, one per 4 other characters. */
export function cheapTokens(text: string): number {
  let wide = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x2e7f) wide++;
  return wide + Math.ceil((text.length - wide) / 4);
}

/** The cheap counter, used for non-OpenAI models and while tiktoken is not loaded. */
export const cheapCounter: TokenCounter = {
  count: async (texts) => texts.reduce((n, t) => n + cheapTokens(t), 0),
};

/** Flat cost of an image part when its size is unknown (a low-detail tile). */
const IMAGE_TOKENS = 85;

/**
 * What to count for a chat request's prompt, and the fixed part: 3 per message, 3 per name and
 * 3 at the end (OpenAI's rule), plus a flat cost per image.
 */
export function chatPromptParts(req: ChatRequest): { texts: string[]; fixed: number } {
  const texts: string[] = [];
  let fixed = 3;
  for (const m of req.messages ?? []) {
    fixed += 3;
    const c = m.content;
    if (typeof c === 'string') texts.push(c);
    else if (Array.isArray(c)) {
      for (const p of c) {
        if (p.type === 'text' && p.text) texts.push(p.text);
        else if (p.type === 'image_url' || p.type === 'image') fixed += IMAGE_TOKENS;
      }
    }
    if (m.name) {
      fixed += 3;
      texts.push(m.name);
    }
    for (const tc of m.tool_calls ?? []) texts.push(tc.function.name + tc.function.arguments);
  }
  if (req.tools?.length) texts.push(JSON.stringify(req.tools));
  return { texts, fixed };
}

/** The texts of an `input` field (embeddings, moderations): a string or a list of strings. */
export function inputTexts(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input)) return input.filter((x): x is string => typeof x === 'string');
  return [];
}

/** Completion tokens of a stream the upstream did not count, from its character tally. */
export function estimateFromTally(chars: number, wideChars: number): number {
  return wideChars + Math.ceil((chars - wideChars) / 4);
}

/** A quick upper bound of a prompt's tokens without tokenizing (a token is at least one byte). */
export function promptUpperBound(bodyBytes: number): number {
  return bodyBytes + 16;
}
