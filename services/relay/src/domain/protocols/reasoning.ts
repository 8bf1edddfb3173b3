/**
 * Reasoning ("thinking") controls between the formats, and new-api's model-name suffixes.
 *
 * Each format says it its own way: OpenAI chat `reasoning_effort`, Responses `reasoning.effort`,
 * Claude `thinking: {type: "enabled", budget_tokens}` (or `adaptive` with `output_config.effort`),
 * Gemini `generationConfig.thinkingConfig` (`thinkingBudget` or `thinkingLevel`, `includeThoughts`).
 * In the canonical (OpenAI chat) request the client's wish is `reasoning_effort` when it gave an
 * effort, plus a `ReasoningIntent` under the `REASONING` symbol when it gave more (a budget, thinking
 * off): a symbol, so that it never reaches an upstream in JSON.
 *
 * Suffixes (new-api's, read from its relay code): `-thinking`, `-thinking-<budget>` (Gemini),
 * `-nothinking` (Gemini), `-minimal`/`-low`/`-medium`/`-high`/`-xhigh`/`-max` (Gemini, Claude
 * Opus 4.6-4.8) and `-none`/`-minimal`/`-low`/`-medium`/`-high`/`-xhigh` (OpenAI o-series and GPT-5);
 * they are stripped from the upstream model and become the intent.
 */
import type { ChatRequest, Json } from './openai.ts';

/** What the client asked of the model's reasoning. */
export interface ReasoningIntent {
  /** false: thinking off (`-nothinking`, a zero budget, `thinking.type: disabled`, effort none). */
  enabled: boolean;
  /** minimal, low, medium, high, xhigh, max. */
  effort?: string;
  /** Thinking tokens (Claude budget_tokens, Gemini thinkingBudget). */
  budget?: number;
  /** Claude's `-thinking` suffix: the budget is this share of max_tokens (new-api: 0.8). */
  budgetShare?: number;
  /** The thoughts are to be shown (Gemini includeThoughts; Claude always returns them). */
  include?: boolean;
  /** Claude: an effort suffix, whose thinking is `adaptive` on Opus 4.6 (new-api). */
  effortSuffix?: boolean;
}

/** The canonical request's reasoning intent (a symbol key: JSON.stringify leaves it out). */
export const REASONING: unique symbol = Symbol('reasoning');

type WithIntent = ChatRequest & { [REASONING]?: ReasoningIntent };

/** Sets the intent on a canonical request. */
export function setReasoning(c: ChatRequest, intent: ReasoningIntent | undefined): void {
  if (intent) (c as WithIntent)[REASONING] = intent;
}

const EFFORTS = new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);

/** The intent of a canonical request: its symbol, else its reasoning_effort. */
export function reasoningOf(c: ChatRequest): ReasoningIntent | undefined {
  const intent = (c as WithIntent)[REASONING];
  const effort = typeof c.reasoning_effort === 'string' ? c.reasoning_effort : undefined;
  if (intent) return effort && !intent.effort ? { ...intent, effort } : intent;
  if (!effort || !EFFORTS.has(effort)) return undefined;
  return effort === 'none' ? { enabled: false, effort } : { enabled: true, effort };
}

// Claude: effort <-> budget_tokens. new-api's low, medium, high (1280, 2048, 4096); minimal is
// Anthropic's least budget, xhigh and max are ours.
const CLAUDE_BUDGET: Record<string, number> = {
  minimal: 1024,
  low: 1280,
  medium: 2048,
  high: 4096,
  xhigh: 8192,
  max: 16384,
};
/** Anthropic's least thinking budget. */
export const CLAUDE_MIN_BUDGET = 1024;

export function claudeBudgetFor(effort: string | undefined): number {
  return CLAUDE_BUDGET[effort ?? ''] ?? 2048;
}

/** A thinking budget as an effort (the inverse of the budgets above, by ranges). */
export function effortForBudget(budget: number): string {
  if (budget <= 0) return 'none';
  if (budget < 2048) return 'low';
  if (budget < 4096) return 'medium';
  return 'high';
}

// Gemini budgets (new-api's clamps and its effort shares of the model's most).
const PRO25 = { min: 128, max: 32768 };
const FLASH25 = { min: 0, max: 24576 };
const LITE25 = { min: 512, max: 24576 };
const isPro25 = (m: string) =>
  m.startsWith('gemini-2.5-pro') &&
  !m.startsWith('gemini-2.5-pro-preview-05-06') &&
  !m.startsWith('gemini-2.5-pro-preview-03-25');
const limits = (m: string) => (m.startsWith('gemini-2.5-flash-lite') ? LITE25 : isPro25(m) ? PRO25 : FLASH25);

/** A Gemini thinking budget kept within what the model takes (-1, dynamic, passes). */
export function clampGeminiBudget(model: string, budget: number): number {
  if (budget === -1) return -1;
  const l = limits(model);
  return Math.min(l.max, Math.max(l.min, budget));
}

const GEMINI_SHARE: Record<string, number> = { minimal: 0.05, low: 0.2, medium: 0.5, high: 0.8, xhigh: 0.8, max: 1 };

export function geminiBudgetFor(model: string, effort: string | undefined): number {
  const l = limits(model);
  return clampGeminiBudget(model, Math.floor(l.max * (GEMINI_SHARE[effort ?? ''] ?? 0.5)));
}

/** Gemini 3 takes a thinking level (Pro: low, high; Flash also minimal and medium), not a budget. */
export function geminiLevelFor(model: string, effort: string): string | undefined {
  if (!/^gemini-3/.test(model)) return undefined;
  if (/pro/.test(model)) return effort === 'minimal' || effort === 'low' ? 'low' : 'high';
  if (effort === 'xhigh' || effort === 'max') return 'high';
  return effort;
}

/** OpenAI models that take reasoning_effort (others refuse it). */
export function openaiReasons(model: string): boolean {
  return /^(o\d|gpt-5|gpt-oss|codex)/.test(model);
}

/** Claude 5 models: adaptive thinking only (Sonnet 5 refuses `enabled` thinking with a 400). */
export const CLAUDE5 = /^claude-(opus|sonnet|haiku|fable|mythos)-5/;

/**
 * Claude models whose thinking is `adaptive` (new-api: Opus 4.6 with an effort suffix, 4.7 and 4.8
 * always; Anthropic's model pages: every Claude 5 model).
 */
export function claudeAdaptive(model: string, viaEffortSuffix = false): boolean {
  if (/^claude-opus-4-[78]/.test(model) || CLAUDE5.test(model)) return true;
  return viaEffortSuffix && model.startsWith('claude-opus-4-6');
}

/** What a model-name suffix means for one upstream protocol; undefined when the name has none. */
export interface SuffixMeaning {
  /** The model without the suffix. */
  model: string;
  intent: ReasoningIntent;
  /** The suffix was an effort level (Claude: adaptive thinking on the models that have it). */
  effortSuffix: boolean;
}

const EFFORT_SUFFIX = /-(max|xhigh|high|medium|low|minimal)$/;
const OPENAI_SUFFIX = /-(none|minimal|low|medium|high|xhigh)$/;

/**
 * new-api's model-name suffixes for a channel speaking `wire`: the upstream model without the
 * suffix and the reasoning it asks for. Names without a suffix the protocol knows are left as
 * they are (e.g. `-high` on a model that takes no effort).
 */
export function parseModelSuffix(model: string, wire: string): SuffixMeaning | undefined {
  if (wire === 'openai' || wire === 'responses') {
    const m = OPENAI_SUFFIX.exec(model);
    if (!m) return undefined;
    const base = model.slice(0, m.index);
    if (!openaiReasons(base)) return undefined;
    const effort = m[1] as string;
    return { model: base, intent: { enabled: effort !== 'none', effort }, effortSuffix: true };
  }
  if (wire === 'claude') {
    if (model.endsWith('-thinking')) {
      return {
        model: model.slice(0, -'-thinking'.length),
        intent: { enabled: true, budgetShare: 0.8 },
        effortSuffix: false,
      };
    }
    const m = EFFORT_SUFFIX.exec(model);
    if (!m) return undefined;
    const base = model.slice(0, m.index);
    if (!/^claude-opus-4-[678]/.test(base) && !CLAUDE5.test(base)) return undefined;
    return { model: base, intent: { enabled: true, effort: m[1] as string, effortSuffix: true }, effortSuffix: true };
  }
  if (wire === 'gemini') {
    const at = model.indexOf('-thinking-');
    if (at > 0) {
      const base = model.slice(0, at);
      const tail = model.slice(at + '-thinking-'.length);
      const n = Number(tail);
      // A name such as gemini-2.0-flash-thinking-exp-01-21 is a model of its own, not a budget.
      if (!/^\d+$/.test(tail) || !Number.isInteger(n)) return undefined;
      return {
        model: base,
        intent: { enabled: n !== 0, budget: clampGeminiBudget(base, n), include: true },
        effortSuffix: false,
      };
    }
    if (model.endsWith('-thinking'))
      return {
        model: model.slice(0, -'-thinking'.length),
        intent: { enabled: true, budgetShare: 0.6, include: true },
        effortSuffix: false,
      };
    if (model.endsWith('-nothinking'))
      return { model: model.slice(0, -'-nothinking'.length), intent: { enabled: false }, effortSuffix: false };
    const m = EFFORT_SUFFIX.exec(model);
    if (!m || !model.startsWith('gemini-')) return undefined;
    return {
      model: model.slice(0, m.index),
      intent: { enabled: true, effort: m[1] as string, include: true },
      effortSuffix: true,
    };
  }
  return undefined;
}

/** Merges a suffix's intent over the client's (the suffix wins: the operator named the model). */
export function withSuffix(c: ChatRequest, meaning: SuffixMeaning): ChatRequest {
  const out: ChatRequest = { ...c };
  const intent: ReasoningIntent = { ...(reasoningOf(c) ?? {}), ...meaning.intent };
  if (meaning.intent.budget !== undefined) delete intent.effort;
  if (meaning.intent.effort || meaning.intent.budgetShare) delete intent.budget;
  setReasoning(out, intent);
  if (meaning.intent.effort) out.reasoning_effort = meaning.intent.effort;
  else if (!meaning.intent.enabled) out.reasoning_effort = 'none';
  return out;
}

/** Json helper for the protocols: a value as a plain object. */
export const asObject = (v: unknown): Json | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
