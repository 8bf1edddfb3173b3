import { CHANNEL_CATALOGUE, type ChannelTypeEntry } from '@aigw/common/channel-catalogue';

/**
 * A catalogue entry as `GET /api/channel/types` serves it (snake_case like the rest of /api);
 * texts stay `{zh, en}` pairs: the console picks the reader's language.
 */
export function channelTypeWire(e: ChannelTypeEntry) {
  return {
    type: e.type,
    name: e.name,
    name_en: e.nameEn ?? e.name,
    color: e.color,
    base_url: e.baseUrl,
    served_by: e.servedBy,
    key_hint: e.keyHint ?? null,
    key_parts: e.keyParts
      ? {
          sep: e.keyParts.sep,
          parts: e.keyParts.parts.map((p) => ({
            name: p.name,
            label: p.label,
            placeholder: p.placeholder,
            secret: p.secret ?? false,
          })),
        }
      : null,
    other: e.other ? { label: e.other.label, hint: e.other.hint ?? null, default: e.other.default ?? '' } : null,
    form: {
      base_url_label: e.form?.baseUrlLabel ?? null,
      base_url_placeholder: e.form?.baseUrlPlaceholder ?? null,
      openai_organization: e.form?.openaiOrganization ?? false,
      single_key: e.form?.singleKey ?? false,
    },
    models: e.models,
  };
}

/** The whole catalogue, in the console's picker order. */
export const channelTypesWire = () => CHANNEL_CATALOGUE.map(channelTypeWire);
