/**
 * The channel form's overrides (new-api's channel fields): param_override, header_override and
 * settings as JSON text, `setting` as separate fields. Checked here before saving; the server
 * checks them again and refuses what does not fit.
 */
import { tr } from '../../locale/translate.ts';

export interface OverrideFields {
  param_override: string;
  header_override: string;
  settings: string;
  system_prompt: string;
  system_prompt_override: boolean;
  proxy: string;
  force_format: boolean;
  thinking_to_content: boolean;
  pass_through_body_enabled: boolean;
}

type Stored = { param_override?: string; header_override?: string; setting?: string; settings?: string };

function objectOf(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The form fields of a stored channel (or blanks). */
export function overrideFieldsOf(c: Stored): OverrideFields {
  const s = objectOf(c.setting ?? '') ?? {};
  return {
    param_override: c.param_override ?? '',
    header_override: c.header_override ?? '',
    settings: c.settings ?? '',
    system_prompt: typeof s.system_prompt === 'string' ? s.system_prompt : '',
    system_prompt_override: s.system_prompt_override === true,
    proxy: typeof s.proxy === 'string' ? s.proxy : '',
    force_format: s.force_format === true,
    thinking_to_content: s.thinking_to_content === true,
    pass_through_body_enabled: s.pass_through_body_enabled === true,
  };
}

/** What the form sends: the JSON texts, and `setting` with the fields that are set ('' when none). */
export function overridesBody(f: OverrideFields): Required<Stored> {
  const setting: Record<string, unknown> = {};
  if (f.system_prompt.trim()) setting.system_prompt = f.system_prompt;
  if (f.system_prompt_override) setting.system_prompt_override = true;
  if (f.proxy.trim()) setting.proxy = f.proxy.trim();
  if (f.force_format) setting.force_format = true;
  if (f.thinking_to_content) setting.thinking_to_content = true;
  if (f.pass_through_body_enabled) setting.pass_through_body_enabled = true;
  return {
    param_override: f.param_override.trim(),
    header_override: f.header_override.trim(),
    settings: f.settings.trim(),
    setting: Object.keys(setting).length ? JSON.stringify(setting) : '',
  };
}

/** The reasons the fields cannot be saved, in the console's language (empty when they can). */
export function overrideErrors(f: OverrideFields): string[] {
  const errors: string[] = [];
  const json = (text: string, label: Parameters<typeof tr>[0]) => {
    if (text.trim() === '') return undefined;
    const o = objectOf(text);
    if (!o) errors.push(tr('channelOverrides.invalidJson', { field: tr(label) }));
    return o;
  };
  json(f.param_override, 'channelOverrides.paramOverride');
  const headers = json(f.header_override, 'channelOverrides.headerOverride');
  if (headers && Object.values(headers).some((v) => typeof v !== 'string')) {
    errors.push(tr('channelOverrides.headerValues'));
  }
  json(f.settings, 'channelOverrides.otherSettings');
  if (f.proxy.trim() && !/^https?:\/\/[^\s/]+/.test(f.proxy.trim())) errors.push(tr('channelOverrides.invalidProxy'));
  return errors;
}

/** Whether a channel has any override (the list shows a tag with the details). */
export function hasOverrides(c: Stored): boolean {
  return Boolean(c.param_override || c.header_override || c.setting || c.settings);
}
