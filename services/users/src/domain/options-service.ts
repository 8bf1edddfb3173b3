import type { OptionRepository } from '../data/option-repository.ts';
import { isOptionKey, OPTION_CATALOGUE } from './option-catalogue.ts';
import { checkPrerequisites, validateOption } from './validate-option.ts';

/** Publishes an option change to every service (option-changed event). */
export type OptionChangePublisher = (key: string, value: string, version: number) => Promise<void>;

const isSecret = (key: string) => isOptionKey(key) && OPTION_CATALOGUE[key].secret === true;

/** Use cases on system options: read (secrets hidden unless asked), validated writes with events. */
export function optionsService(repo: OptionRepository, publish: OptionChangePublisher) {
  return {
    async list(includeSecrets: boolean) {
      const { values, version } = await repo.all();
      const options = Object.entries(values)
        .filter(([key]) => includeSecrets || !isSecret(key))
        .map(([key, value]) => ({ key, value }));
      return { options, version };
    },
    async get(key: string) {
      const { values } = await repo.all();
      return values[key];
    },
    /** Saves one key (and what it implies), publishing one event per stored change. */
    async update(key: string, raw: string) {
      const { value, implied } = validateOption(key, raw);
      checkPrerequisites(key, value, (await repo.all()).values);
      let version = 0;
      for (const [k, v] of [[key, value] as [string, string], ...implied]) {
        version = await repo.set(k, v);
        await publish(k, v, version);
      }
      return { key, value, version };
    },
    async changedSince(since: number) {
      const { values, version } = await repo.changedSince(since);
      return { options: Object.entries(values).map(([key, value]) => ({ key, value })), version };
    },
  };
}

export type OptionsService = ReturnType<typeof optionsService>;
