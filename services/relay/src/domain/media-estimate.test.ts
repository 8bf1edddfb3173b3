import { describe, expect, it } from 'vitest';
import { IMAGE_UNKNOWN, imageRuleTokens, imageSize, mediaUpperTokens, PDF_PAGE } from './media-estimate.ts';

/** The first bytes of a PNG of w x h (signature and IHDR): enough for its size. */
function pngHead(w: number, h: number): Buffer {
  const b = Buffer.alloc(33);
  b.writeUInt32BE(0x89504e47, 0);
  b.writeUInt32BE(0x0d0a1a0a, 4);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  return b;
}

/** A JPEG start: SOI, an APP0 segment, then a baseline frame header of w x h. */
function jpegHead(w: number, h: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const sof = Buffer.alloc(19);
  sof.set([0xff, 0xc0, 0x00, 0x11, 8]);
  sof.writeUInt16BE(h, 5);
  sof.writeUInt16BE(w, 7);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof]);
}

const dataUrl = (mime: string, b: Buffer) => `data:${mime};base64,${b.toString('base64')}`;

describe('image sizes', () => {
  it('when a PNG or JPEG header is given, then its width and height are read', () => {
    expect(imageSize(pngHead(1024, 768))).toEqual({ width: 1024, height: 768 });
    expect(imageSize(jpegHead(4000, 3000))).toEqual({ width: 4000, height: 3000 });
    expect(imageSize(Buffer.from('not an image'))).toBeUndefined();
  });

  it('when an image is 1024 x 1024, then the dearest rule is the patch rule (1,024 patches x 1.62)', () => {
    // Tiles: 768 x 768 -> 4 tiles -> 765; Claude: 1,398; patches: 1,659.
    expect(imageRuleTokens(1024, 1024)).toBe(1659);
    // Small images cost little under every rule.
    expect(imageRuleTokens(64, 64)).toBe(255);
  });
});

describe('media upper bound', () => {
  it('when a chat request has images, then low detail is 85, a sized one its rule and a URL the unknown figure', () => {
    const body = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
            { type: 'image_url', image_url: { url: dataUrl('image/png', pngHead(1024, 1024)) } },
            { type: 'image_url', image_url: { url: 'https://example.com/b.png' } },
          ],
        },
      ],
    };
    expect(mediaUpperTokens(body)).toBe(85 + 1659 + IMAGE_UNKNOWN);
  });

  it('when audio is given as input_audio or Gemini inline data, then 1 token per 30 bytes', () => {
    const audio = Buffer.alloc(30_000).toString('base64');
    expect(
      mediaUpperTokens({
        messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: audio, format: 'wav' } }] }],
      }),
    ).toBe(1000);
    expect(mediaUpperTokens({ contents: [{ parts: [{ inlineData: { mimeType: 'audio/mp3', data: audio } }] }] })).toBe(
      1000,
    );
  });

  it('when a PDF comes as a chat file, a Responses input_file or a Claude document, then each page counts PDF_PAGE', () => {
    const pdf = Buffer.from(
      '%PDF-1.4\n1 0 obj <</Type /Pages /Count 3>> endobj\n2 0 obj <</Type /Page>>\n3 0 obj <</Type/Page>>\n4 0 obj <</Type /Page /Parent 1 0 R>>\n%%EOF',
    ).toString('base64');
    expect(
      mediaUpperTokens({
        messages: [
          {
            role: 'user',
            content: [{ type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${pdf}` } }],
          },
        ],
      }),
    ).toBe(3 * PDF_PAGE);
    expect(
      mediaUpperTokens({
        input: [{ role: 'user', content: [{ type: 'input_file', file_data: `data:application/pdf;base64,${pdf}` }] }],
      }),
    ).toBe(3 * PDF_PAGE);
    expect(
      mediaUpperTokens({
        messages: [
          {
            role: 'user',
            content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf } }],
          },
        ],
      }),
    ).toBe(3 * PDF_PAGE);
  });

  it('when a Claude image is base64, then its size decides; text-only requests cost nothing extra', () => {
    const jpeg = jpegHead(800, 600).toString('base64');
    expect(
      mediaUpperTokens({
        messages: [
          {
            role: 'user',
            content: [{ type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: jpeg } }],
          },
        ],
      }),
    ).toBe(imageRuleTokens(800, 600));
    expect(mediaUpperTokens({ messages: [{ role: 'user', content: 'hello' }] })).toBe(0);
  });
});
