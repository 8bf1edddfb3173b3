import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every user-facing string goes through the locale files (issue 14, item 3): a Chinese character
 * in console/src outside zh-CN.ts is a label English readers would see untranslated. Comments and
 * test files may hold Chinese; the allow-list names the few literals that must stay as they are.
 */
const SRC = join(import.meta.dirname, '..');

const ALLOWED: readonly { file: string; text: string; why: string }[] = [
  {
    file: 'layout/navbar.tsx',
    text: '简体中文',
    why: 'a language picker names each language in that language, so a reader of it can find it',
  },
  {
    file: 'locale/en-US.ts',
    text: '验证码',
    why: 'the WeChat account answers the Chinese word 验证码; English readers must send it as written',
  },
];

const CJK = /[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx)$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) ? [path] : [];
  });
}

/** The source with its comments blanked (strings and template literals kept, line numbers kept). */
function stripComments(src: string): string {
  let out = '';
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    const next = src[i + 1];
    if (c === '/' && next === '/') {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (c === '/' && next === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end === -1 ? src.length : end + 2;
      out += src.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < src.length && src[j] !== c && (c === '`' || src[j] !== '\n')) j += src[j] === '\\' ? 2 : 1;
      out += src.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Lines of file (relative to src) that hold Chinese outside comments and the allow-list. */
function chineseLines(file: string, src: string): string[] {
  const allowed = ALLOWED.filter((a) => a.file === file).map((a) => a.text);
  return stripComments(src)
    .split('\n')
    .map((line, n) => ({ line: allowed.reduce((l, text) => l.replaceAll(text, ''), line), n }))
    .filter(({ line }) => CJK.test(line))
    .map(({ line, n }) => `${file}:${n + 1}: ${line.trim()}`);
}

describe('Chinese text in the console source', () => {
  it('when a comment, a string or JSX text holds Chinese, then the scan finds only the code', () => {
    const src = "// 注释\nconst a = '中文'; /* 注释 */\nconst url = 'https://x'; // 注释\n<b>你好</b>\n";
    expect(chineseLines('x.tsx', src)).toEqual(["x.tsx:2: const a = '中文';", 'x.tsx:4: <b>你好</b>']);
  });

  it('when the source is scanned, then no Chinese is outside zh-CN.ts and the allow-list', () => {
    const found = sourceFiles(SRC)
      .map((path) => relative(SRC, path).replaceAll('\\', '/'))
      // server-messages.ts: the server's Chinese messages, the keys of their English text.
      .filter((file) => file !== 'locale/zh-CN.ts' && file !== 'locale/server-messages.ts')
      .flatMap((file) => chineseLines(file, readFileSync(join(SRC, file), 'utf8')));
    expect(found).toEqual([]);
  });

  it('when an allowed literal is no longer used, then its entry goes too', () => {
    for (const a of ALLOWED) expect(readFileSync(join(SRC, a.file), 'utf8')).toContain(a.text);
  });
});
