import type { ModelMetaInput } from '../../api/model-meta.ts';
import type { LocaleKey } from '../../locale/zh-CN.ts';

/** The create/edit drawer's fields (endpoints as the JSON text typed). */
export type ModelForm = ModelMetaInput;

export const EMPTY_MODEL: ModelForm = {
  model_name: '',
  description: '',
  icon: '',
  tags: '',
  vendor_id: 0,
  endpoints: '',
  status: 1,
  sync_official: 1,
  name_rule: 0,
};

/** new-api's name rules, in its order (0 exact ... 3 suffix). */
export const NAME_RULES: readonly LocaleKey[] = [
  'models.ruleExact',
  'models.rulePrefix',
  'models.ruleContains',
  'models.ruleSuffix',
];

/** The first problem of a form (as a locale key), checked before it is sent; undefined when fine. */
export function modelFormError(f: ModelForm): LocaleKey | undefined {
  if (!f.model_name.trim()) return 'models.nameRequired';
  if (f.model_name.trim().length > 128) return 'models.nameTooLong';
  if (f.endpoints.trim()) {
    try {
      JSON.parse(f.endpoints);
    } catch {
      return 'models.endpointsNotJson';
    }
  }
  return undefined;
}

/** The comma list of tags as separate tags (empty parts dropped). */
export const tagsOf = (tags: string) =>
  tags
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
