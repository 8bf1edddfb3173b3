/**
 * How a model name finds its entry in a price or ratio map: one rule for the relay (what a request
 * costs) and the gateway (GET /api/models/missing: the models channels serve without a price).
 */

/**
 * Looks a model up exactly, then by a `*` pattern (new-api's `gemini-2.5-flash-thinking-*`, the
 * longest that fits), then without a date or version suffix (gpt-4o-2024-08-06 -> gpt-4o), then by
 * the longest entry it extends (claude-sonnet-4-5-thinking -> claude-sonnet-4-5).
 */
export function lookupModel<T>(map: Record<string, T>, model: string): T | undefined {
  if (Object.hasOwn(map, model)) return map[model];
  let pattern: string | undefined;
  for (const k of Object.keys(map))
    if (k.endsWith('*') && model.startsWith(k.slice(0, -1)) && (!pattern || k.length > pattern.length)) pattern = k;
  if (pattern) return map[pattern];
  const base = model.replace(/-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest|preview)$/i, '');
  if (base !== model && Object.hasOwn(map, base)) return map[base];
  let best: string | undefined;
  for (const k of Object.keys(map)) if (model.startsWith(`${k}-`) && (!best || k.length > best.length)) best = k;
  return best ? map[best] : undefined;
}

/**
 * The models of `models` with neither a price (ModelPrice, at least 0) nor a ratio (ModelRatio),
 * as the relay finds them: what it refuses (or serves at DefaultModelRatio when unpriced models
 * are allowed). Sorted, each once.
 */
export function unpricedModels(
  models: readonly string[],
  modelPrice: Record<string, number>,
  modelRatio: Record<string, number>,
): string[] {
  const out = new Set<string>();
  for (const m of models) {
    const price = lookupModel(modelPrice, m);
    if (price !== undefined && price >= 0) continue;
    if (lookupModel(modelRatio, m) === undefined) out.add(m);
  }
  return [...out].sort();
}
