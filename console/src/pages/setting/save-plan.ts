import { tr } from '../../locale/translate.ts';
import type { SectionSpec } from './sections.ts';

export const nothingChanged = () => tr('setting.youDidNotChangeAnything');
export const checkInput = () => tr('setting.pleaseCheckYourInput');

export type SavePlan =
  | { ok: true; changes: [key: string, value: string][] }
  | { ok: false; message: string; invalidKeys?: string[] };

/** Whether text is JSON. */
export function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * What saving a section would send: one PUT per changed key. Secrets are sent only when typed
 * (they are never read back); JSON fields must parse; nothing changed gives 你似乎并没有修改什么.
 */
export function planSave(section: SectionSpec, base: Record<string, string>, draft: Record<string, string>): SavePlan {
  const changes: [string, string][] = [];
  const invalid: string[] = [];
  for (const field of section.fields) {
    const value = draft[field.key] ?? '';
    if (field.kind === 'secret') {
      if (value !== '') changes.push([field.key, value]);
      continue;
    }
    if (value === (base[field.key] ?? '')) continue;
    if (field.kind === 'json' && !isJson(value)) invalid.push(field.key);
    if (
      field.kind === 'number' &&
      (value.trim() === '' || Number.isNaN(Number(value)) || (field.min !== undefined && Number(value) < field.min))
    ) {
      invalid.push(field.key);
    }
    changes.push([field.key, field.kind === 'text' ? value.trim() : value]);
  }
  if (invalid.length > 0) return { ok: false, message: checkInput(), invalidKeys: invalid };
  if (changes.length === 0) return { ok: false, message: nothingChanged() };
  return { ok: true, changes };
}
