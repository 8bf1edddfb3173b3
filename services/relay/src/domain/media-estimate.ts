/**
 * What the media of a prompt can cost upstream, at most, in prompt tokens: the part of the
 * pre-consume reservation the text estimate does not see (docs/security.md, "The reservation").
 * Walks the request body as the client sent it (chat, Responses, Claude or Gemini), so files and
 * audio that the canonical chat form drops still count.
 *
 * - Images: 85 at `detail: "low"`; with the size known (a base64 PNG, JPEG, GIF or WebP) the
 *   dearest of OpenAI's tile rule (fit in 2048, shortest side 768, 170 per 512 px tile + 85),
 *   OpenAI's patch rule (32 px patches, at most 1,536, times 1.62 for the mini models) and
 *   Claude's (w x h / 750 after fitting 1,568 px); size unknown (a URL): IMAGE_UNKNOWN.
 * - Audio (chat `input_audio`, Gemini `audio/*` inline data): decoded bytes / 30, i.e. 32 tokens a
 *   second (Gemini's rate, above OpenAI's 10) at 8 kbit/s, the lowest bit rate in use.
 * - Documents (PDF as chat `file`, Responses `input_file`, Claude `document`, Gemini
 *   `application/pdf`): PDF_PAGE tokens a page (text and the page's image, as OpenAI and Claude
 *   bill them), pages counted in the file, or one per 2 KB (at most 100) when the page tree is
 *   compressed.
 *
 * Not covered (left to the bound's δ): files referenced by id (`file_id`, Gemini `fileData`) and
 * images or documents by URL beyond the flat figures; their size is upstream's to know.
 */
import { parseDataUrl } from './protocols/openai.ts';

/** A not-low-detail image whose size is unknown: above every rule's largest answer. */
export const IMAGE_UNKNOWN = 2_500;
const IMAGE_LOW = 85;
/** One PDF page: its text (dense: about 1,000 tokens) and its image (Claude: about 1,600). */
export const PDF_PAGE = 3_000;
const AUDIO_BYTES_PER_TOKEN = 30;
const PDF_BYTES_PER_PAGE = 2_000;
const PDF_PAGES_UNKNOWN_MAX = 100;

type Json = Record<string, unknown>;

/** Upper bound of the prompt tokens of the media in a request body (0 when it has none). */
export function mediaUpperTokens(body: unknown): number {
  let total = 0;
  const visit = (v: unknown, depth: number): void => {
    if (depth > 12 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x, depth + 1);
      return;
    }
    const o = v as Json;
    const found = partTokens(o);
    if (found !== undefined) {
      total += found;
      return;
    }
    for (const k in o) {
      const x = o[k];
      if (x !== null && typeof x === 'object') visit(x, depth + 1);
    }
  };
  visit(body, 0);
  return total;
}

/** The tokens of one media part, or undefined when `o` is not one. */
function partTokens(o: Json): number | undefined {
  switch (o.type) {
    case 'image_url': {
      const iu = o.image_url as Json | string | undefined;
      const url = typeof iu === 'string' ? iu : typeof iu?.url === 'string' ? iu.url : '';
      return imageTokens(url, typeof iu === 'object' ? iu?.detail : undefined);
    }
    case 'input_image':
      return imageTokens(typeof o.image_url === 'string' ? o.image_url : '', o.detail);
    case 'image': {
      const src = (o.source ?? {}) as Json;
      if (src.type === 'base64' && typeof src.data === 'string') return imageOfBase64(src.data);
      return IMAGE_UNKNOWN;
    }
    case 'input_audio': {
      const a = (o.input_audio ?? {}) as Json;
      return typeof a.data === 'string' ? audioTokens(a.data) : 0;
    }
    case 'file': {
      const f = (o.file ?? {}) as Json;
      return typeof f.file_data === 'string' ? documentTokens(dataPart(f.file_data)) : 0;
    }
    case 'input_file':
      return typeof o.file_data === 'string' ? documentTokens(dataPart(o.file_data)) : 0;
    case 'document': {
      const src = (o.source ?? {}) as Json;
      if (src.type === 'base64' && typeof src.data === 'string') return documentTokens(src.data);
      if (src.type === 'text' && typeof src.data === 'string') return 0;
      return PDF_PAGE;
    }
  }
  // Gemini: {inlineData: {mimeType, data}} (or inline_data / mime_type).
  const inline = (o.inlineData ?? o.inline_data) as Json | undefined;
  if (inline && typeof inline === 'object' && typeof inline.data === 'string') {
    const mime = String(inline.mimeType ?? inline.mime_type ?? '');
    if (mime.startsWith('image/')) return imageOfBase64(inline.data);
    if (mime.startsWith('audio/') || mime.startsWith('video/')) return audioTokens(inline.data);
    if (mime === 'application/pdf') return documentTokens(inline.data);
    return Math.ceil(decodedLength(inline.data) / 4);
  }
  return undefined;
}

function imageTokens(url: string, detail: unknown): number {
  if (detail === 'low') return IMAGE_LOW;
  return url.startsWith('data:') ? imageOfBase64(dataPart(url)) : IMAGE_UNKNOWN;
}

/** The base64 payload of a data: URL (or the string itself when it is not one: raw base64). */
function dataPart(s: string): string {
  return s.startsWith('data:') ? (parseDataUrl(s)?.data ?? '') : s;
}

/** Bytes a base64 string decodes to, without decoding it. */
function decodedLength(b64: string): number {
  let pad = 0;
  if (b64.endsWith('==')) pad = 2;
  else if (b64.endsWith('=')) pad = 1;
  return Math.max(0, Math.floor((b64.length * 3) / 4) - pad);
}

function audioTokens(b64: string): number {
  return Math.ceil(decodedLength(b64) / AUDIO_BYTES_PER_TOKEN);
}

function imageOfBase64(b64: string): number {
  // The header is near the start (JPEG's frame header after its metadata: the first 256 KB).
  const head = Buffer.from(b64.slice(0, 350_000), 'base64');
  const size = imageSize(head);
  return size ? imageRuleTokens(size.width, size.height) : IMAGE_UNKNOWN;
}

/** The dearest of the providers' image rules for a w x h image (not low detail). */
export function imageRuleTokens(width: number, height: number): number {
  // OpenAI tiles: fit in 2048 x 2048, then the shortest side to 768.
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shrink = Math.min(1, 768 / Math.min(w, h));
  w *= shrink;
  h *= shrink;
  const tiles = Math.ceil(w / 512) * Math.ceil(h / 512);
  const tileRule = 85 + 170 * tiles;
  // OpenAI patches (gpt-4.1-mini, o4-mini...): 32 px, at most 1,536, times 1.62.
  const patchRule = Math.ceil(Math.min(1536, Math.ceil(width / 32) * Math.ceil(height / 32)) * 1.62);
  // Claude: fit in 1,568 px, then w x h / 750.
  const c = Math.min(1, 1568 / Math.max(width, height));
  const claudeRule = Math.ceil((width * c * (height * c)) / 750);
  return Math.max(tileRule, patchRule, claudeRule);
}

/** Width and height from a PNG, GIF, WebP or JPEG header; undefined when not found. */
export function imageSize(b: Buffer): { width: number; height: number } | undefined {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47)
    return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length >= 10 && b.toString('latin1', 0, 3) === 'GIF')
    return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') {
    const kind = b.toString('latin1', 12, 16);
    if (kind === 'VP8X') return { width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) };
    if (kind === 'VP8 ') return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
    if (kind === 'VP8L') {
      const bits = b.readUInt32LE(21);
      return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
    }
    return undefined;
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) return undefined;
      const marker = b[i + 1] as number;
      const len = b.readUInt16BE(i + 2);
      // Start-of-frame markers (not DHT C4, JPG C8, DAC CC): height then width.
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
        return { height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
      i += 2 + len;
    }
  }
  return undefined;
}

/** A PDF's pages at PDF_PAGE each; other documents (text) at 4 bytes a token. */
function documentTokens(b64: string): number {
  const bytes = decodedLength(b64);
  const doc = Buffer.from(b64, 'base64');
  if (doc.toString('latin1', 0, 5) !== '%PDF-') return Math.ceil(bytes / 4);
  const pages = (doc.toString('latin1').match(/\/Type\s*\/Page(?![s\w])/g) ?? []).length;
  // A compressed page tree hides its pages: one per 2 KB, up to the 100 pages Claude and OpenAI take.
  return (
    PDF_PAGE * (pages > 0 ? pages : Math.min(PDF_PAGES_UNKNOWN_MAX, Math.max(1, Math.ceil(bytes / PDF_BYTES_PER_PAGE))))
  );
}
