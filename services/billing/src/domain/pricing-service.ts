import type { JsonOptionKey } from '@aigw/common';
import type { OptionReader } from './ports.ts';
import {
  audioCompletionRatioOf,
  audioRatioOf,
  cacheCreationRatioOf,
  cacheRatioOf,
  completionRatioOf,
  DEFAULT_COMPLETION_RATIO,
  DEFAULT_MODEL_PRICE,
  DEFAULT_MODEL_RATIO,
  imageRatioOf,
} from './pricing-defaults.ts';

/** Saves one option through the users service (which publishes the change). */
export type OptionWriter = (key: string, value: string) => Promise<void>;

/** Every model an enabled ability offers, with the groups offering it. */
export type ModelGroupsSource = () => Promise<{ model: string; groups: string[] }[]>;

export interface PricingEntryView {
  modelName: string;
  quotaType: number;
  modelRatio: number;
  modelPrice: number;
  completionRatio: number;
  /** 0: no audio price of its own. */
  audioRatio: number;
  audioCompletionRatio: number;
  enableGroups: string[];
}

const DEFAULTS: [JsonOptionKey, Record<string, number>][] = [
  ['ModelRatio', DEFAULT_MODEL_RATIO],
  ['CompletionRatio', DEFAULT_COMPLETION_RATIO],
  ['ModelPrice', DEFAULT_MODEL_PRICE],
];

const isEmptyJsonObject = (raw: string | undefined) => {
  if (raw === undefined || raw.trim() === '') return true;
  try {
    const v = JSON.parse(raw) as unknown;
    return typeof v === 'object' && v !== null && Object.keys(v).length === 0;
  } catch {
    return false;
  }
};

/**
 * Prices from the ratio options (ModelRatio, CompletionRatio, ModelPrice, GroupRatio, and the
 * token-kind ratios CacheRatio, CacheCreationRatio, AudioRatio, AudioCompletionRatio, ImageRatio). The
 * first four start empty and the billing service seeds them with the defaults once, so that the
 * settings page shows and edits the real table; the token-kind options hold overrides only, and
 * the family rules of pricing-defaults.ts price every other model.
 */
export function pricingService(deps: {
  options: OptionReader;
  writeOption: OptionWriter;
  modelGroups: ModelGroupsSource;
}) {
  const { options } = deps;
  const map = (key: JsonOptionKey) => options.json<Record<string, number>>(key);

  /**
   * An explicit option map completed by a family rule for every ratio-priced model; with several
   * options (an old name and new-api's), the later one's entries win.
   */
  const withRules = (
    option: JsonOptionKey | JsonOptionKey[],
    rule: (model: string, explicit: Record<string, number>) => number | undefined,
    models: string[],
  ): Record<string, number> => {
    const explicit: Record<string, number> = Object.assign(
      {},
      ...(Array.isArray(option) ? option : [option]).map((o) => map(o)),
    );
    const out: Record<string, number> = { ...explicit };
    for (const model of models) {
      const v = rule(model, explicit);
      if (v !== undefined) out[model] = v;
    }
    return out;
  };

  function ratios() {
    const modelRatio = map('ModelRatio');
    const models = Object.keys(modelRatio);
    return {
      modelRatio,
      completionRatio: withRules('CompletionRatio', completionRatioOf, models),
      modelPrice: map('ModelPrice'),
      groupRatio: map('GroupRatio'),
      cacheRatio: withRules('CacheRatio', cacheRatioOf, models),
      // new-api's CreateCacheRatio; CacheCreationRatio is this platform's earlier name, still read.
      cacheCreationRatio: withRules(['CacheCreationRatio', 'CreateCacheRatio'], cacheCreationRatioOf, models),
      audioRatio: withRules('AudioRatio', audioRatioOf, models),
      audioCompletionRatio: withRules('AudioCompletionRatio', audioCompletionRatioOf, models),
      imageRatio: withRules('ImageRatio', imageRatioOf, models),
    };
  }

  return {
    /** Writes the defaults into ratio options that are still empty. */
    async seedDefaults(): Promise<string[]> {
      const seeded: string[] = [];
      for (const [key, value] of DEFAULTS) {
        if (!isEmptyJsonObject(options.get(key))) continue;
        await deps.writeOption(key, JSON.stringify(value, null, 2));
        seeded.push(key);
      }
      return seeded;
    },

    /** POST /api/option/rest_model_ratio: model ratios, completion ratios and prices to defaults. */
    async reset(): Promise<void> {
      for (const [key, value] of DEFAULTS) await deps.writeOption(key, JSON.stringify(value, null, 2));
    },

    ratios,

    groupRatios: () => map('GroupRatio'),

    /** The pricing page: every offered model with its prices and groups. */
    async pricing(): Promise<{ items: PricingEntryView[]; groupRatio: Record<string, number> }> {
      const { modelRatio, modelPrice, groupRatio } = ratios();
      const explicitCompletion = map('CompletionRatio');
      const explicitAudio = map('AudioRatio');
      const explicitAudioCompletion = map('AudioCompletionRatio');
      const offered = await deps.modelGroups();
      const items = offered
        .map(({ model, groups }) => {
          const price = modelPrice[model];
          const perCall = typeof price === 'number';
          // Audio tokens have a price of their own where a ratio exists (option or family rule);
          // audio output without its own ratio costs as much as audio input (the relay's 1).
          const audio = perCall ? undefined : audioRatioOf(model, explicitAudio);
          return {
            modelName: model,
            quotaType: perCall ? 1 : 0,
            modelRatio: perCall ? 0 : (modelRatio[model] ?? 0),
            modelPrice: perCall ? price : 0,
            completionRatio: perCall ? 0 : completionRatioOf(model, explicitCompletion),
            audioRatio: audio ?? 0,
            audioCompletionRatio:
              audio === undefined ? 0 : (audioCompletionRatioOf(model, explicitAudioCompletion) ?? 1),
            enableGroups: [...groups].sort(),
          };
        })
        .sort((a, b) => a.modelName.localeCompare(b.modelName));
      return { items, groupRatio };
    },
  };
}

export type PricingService = ReturnType<typeof pricingService>;
