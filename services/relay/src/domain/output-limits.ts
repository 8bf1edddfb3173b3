/**
 * The most completion tokens a model can produce in one answer: what a request without
 * max_tokens is reserved for (see docs/security.md ("Overspend bound")). Looked up by the longest matching
 * prefix of the model name; RELAY_OUTPUT_LIMITS (JSON, prefix -> tokens) adds or overrides
 * entries, RELAY_DEFAULT_OUTPUT_LIMIT covers models no prefix matches.
 */
export const DEFAULT_OUTPUT_LIMITS: Record<string, number> = {
  'gpt-3.5-turbo': 4_096,
  'gpt-4': 8_192,
  'gpt-4-turbo': 4_096,
  'gpt-4o': 16_384,
  'chatgpt-4o': 16_384,
  'gpt-4.1': 32_768,
  'gpt-5': 128_000,
  o1: 100_000,
  o3: 100_000,
  o4: 100_000,
  'claude-3': 4_096,
  'claude-3-5': 8_192,
  'claude-3-7': 64_000,
  'claude-sonnet-4': 64_000,
  'claude-opus-4': 32_000,
  gemini: 8_192,
  'gemini-2.5': 65_536,
  deepseek: 8_192,
  'deepseek-reasoner': 65_536,
};

/** Builds the lookup: the longest prefix of `model` in the table, else `fallback`. */
export function outputLimits(overrides: Record<string, number>, fallback: number): (model: string) => number {
  const table = { ...DEFAULT_OUTPUT_LIMITS, ...overrides };
  const prefixes = Object.keys(table).sort((a, b) => b.length - a.length);
  const memo = new Map<string, number>();
  return (model) => {
    let v = memo.get(model);
    if (v === undefined) {
      const lower = model.toLowerCase();
      const hit = prefixes.find((p) => lower.startsWith(p.toLowerCase()));
      v = hit ? (table[hit] as number) : fallback;
      if (memo.size < 10_000) memo.set(model, v);
    }
    return v;
  };
}
