import { modelsByType } from '../../api/channel.ts';

/** localStorage key of the cached GET /api/models answer (channel type -> model names). */
export const TYPE_MODELS_KEY = 'channel_type_models';

type TypeModels = Record<string, string[]>;

/** The cached map, or undefined when none (or an unreadable one) is stored. */
export function cachedTypeModels(): TypeModels | undefined {
  try {
    const value = JSON.parse(localStorage.getItem(TYPE_MODELS_KEY) ?? 'null') as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as TypeModels) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The model lists per channel type as spec 01 section 7 describes them: cached locally. `use` gets
 * the cached map at once (the form is usable without waiting), then the server's fresh one, which
 * replaces the cache.
 */
export async function loadTypeModels(use: (models: TypeModels) => void): Promise<void> {
  const cached = cachedTypeModels();
  if (cached) use(cached);
  const res = await modelsByType();
  if (!res.success || !res.data) return;
  localStorage.setItem(TYPE_MODELS_KEY, JSON.stringify(res.data));
  use(res.data);
}
