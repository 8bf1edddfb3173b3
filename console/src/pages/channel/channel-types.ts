import { useEffect, useState } from 'react';
import { type CatalogueText, type ChannelTypeInfo, channelTypes } from '../../api/channel.ts';
import { storedLang, tr } from '../../locale/translate.ts';

/**
 * The channel types as the server's catalogue has them (GET /api/channel/types, built from
 * services/common/src/channel-catalogue.ts): the type picker, the list's tags and the form's
 * per-type fields all read it; this file keeps only how to show an entry.
 */
export type { ChannelTypeInfo } from '../../api/channel.ts';

/** A catalogue text in the reader's language. */
export const inLang = (text: CatalogueText): string => (storedLang() === 'en-US' ? text.en : text.zh);

/** The type's name in the reader's language. */
export const typeLabel = (e: ChannelTypeInfo): string => (storedLang() === 'en-US' ? e.name_en : e.name);

let loading: Promise<ChannelTypeInfo[]> | undefined;

/** The catalogue, fetched once per page load (it changes only with a new release). */
export function loadChannelTypes(): Promise<ChannelTypeInfo[]> {
  loading ??= channelTypes().then((res) => {
    if (res.success && res.data) return res.data;
    loading = undefined;
    return [];
  });
  return loading;
}

/** The catalogue for a component: empty until it arrives. */
export function useChannelTypes(): ChannelTypeInfo[] {
  const [types, setTypes] = useState<ChannelTypeInfo[]>([]);
  useEffect(() => {
    let live = true;
    void loadChannelTypes().then((t) => live && setTypes(t));
    return () => {
      live = false;
    };
  }, []);
  return types;
}

/** The entry of a type in a loaded catalogue. */
export const typeOf = (types: ChannelTypeInfo[], type: number): ChannelTypeInfo | undefined =>
  types.find((e) => e.type === type);

/** The key box's placeholder (spec 01 section 5 key formats). */
export const keyHint = (e: ChannelTypeInfo | undefined): string =>
  e?.key_hint ? inLang(e.key_hint) : tr('channel.enterTheChannelSAuthentication');

/** One input of a key made of parts (spec 01 section 5 key formats). */
export interface KeyPart {
  label: string;
  placeholder: string;
  secret?: boolean;
}

/** Types whose key is several values joined by `sep`: the form shows one input per value. */
export function keyParts(e: ChannelTypeInfo | undefined): { sep: string; parts: KeyPart[] } | undefined {
  if (!e?.key_parts) return undefined;
  return {
    sep: e.key_parts.sep,
    parts: e.key_parts.parts.map((p) => ({
      label: inLang(p.label),
      placeholder: inLang(p.placeholder),
      secret: p.secret,
    })),
  };
}

/** The key of its parts: '' when all are empty (an edit keeping the key). */
export function joinKeyParts(e: ChannelTypeInfo | undefined, values: string[]): string {
  const def = e?.key_parts;
  if (!def || values.every((v) => !v.trim())) return '';
  return def.parts.map((_p, i) => (values[i] ?? '').trim()).join(def.sep);
}

/** Multi-key state of a channel row (multi_key_status), undefined for single-key channels. */
export function multiKeyState(
  mode: string | undefined,
  status: string | undefined,
): { size: number; disabled: { index: number; reason: string; time: number }[] } | undefined {
  if (!mode || !status) return undefined;
  try {
    const o = JSON.parse(status) as { size?: number; disabled?: { index: number; reason: string; time: number }[] };
    return { size: o.size ?? 0, disabled: o.disabled ?? [] };
  } catch {
    return undefined;
  }
}

/** The `other` field of a type: its label, hint and default; undefined when the form hides it. */
export function otherField(
  e: ChannelTypeInfo | undefined,
): { label: string; hint: string; placeholder: string } | undefined {
  if (!e?.other) return undefined;
  return { label: inLang(e.other.label), hint: e.other.hint ? inLang(e.other.hint) : '', placeholder: e.other.default };
}

/** The default of `other` for a type ('' when none: spec 01 section 5). */
export const defaultOther = (e: ChannelTypeInfo | undefined): string => e?.other?.default ?? '';

/** Response-time badge (spec 01 section 4): 0 untested; <=1 s green; <=3 s lime; <=5 s yellow; else red. */
export function responseTimeBadge(ms: number): { color: string; text: string } {
  if (!ms) return { color: 'gray', text: tr('channel.notTested') };
  const text = tr('common.seconds', { n: (ms / 1000).toFixed(2) });
  if (ms <= 1000) return { color: 'green', text };
  if (ms <= 3000) return { color: 'lime', text };
  if (ms <= 5000) return { color: 'gold', text };
  return { color: 'red', text };
}

/** status_reason and status_time of other_info, when present. */
export function statusReason(otherInfo: string): { reason: string; time: number } | undefined {
  if (!otherInfo) return undefined;
  try {
    const o = JSON.parse(otherInfo) as { status_reason?: string; status_time?: number };
    return { reason: o.status_reason ?? '', time: o.status_time ?? 0 };
  } catch {
    return undefined;
  }
}
