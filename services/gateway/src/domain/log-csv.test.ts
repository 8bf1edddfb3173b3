import { describe, expect, it } from 'vitest';
import { ADMIN_COLUMNS, BOM, csvField, csvHead, csvRow, SELF_COLUMNS, utcTime } from './log-csv.ts';

describe('log CSV', () => {
  it('when a field holds commas, quotes or line breaks, then it is quoted with quotes doubled', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('one\ntwo')).toBe('"one\ntwo"');
    expect(csvField('中文，内容')).toBe('中文，内容');
    expect(csvField(undefined)).toBe('');
    expect(csvField(-12)).toBe('-12');
    expect(csvField(true)).toBe('true');
  });

  it('when text starts like a formula, then it is written as text', () => {
    expect(csvField('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"');
    expect(csvField('+1')).toBe("'+1");
    expect(csvField('@me')).toBe("'@me");
  });

  it('when the head and a row are written, then the BOM, the header and the values line up', () => {
    expect(csvHead(SELF_COLUMNS).startsWith(`${BOM}id,created_at,time,type,user_id,username`)).toBe(true);
    expect(SELF_COLUMNS).not.toContain('channel');
    expect(ADMIN_COLUMNS).toContain('ip');
    const line = csvRow(['id', 'time', 'content'], { id: 7, created_at: 1_795_000_000, content: '你好, "世界"' });
    expect(line).toBe(`7,${utcTime(1_795_000_000)},"你好, ""世界"""\r\n`);
    expect(utcTime(0)).toBe('1970-01-01 00:00:00');
  });
});
