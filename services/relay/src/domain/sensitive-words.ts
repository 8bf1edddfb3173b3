/**
 * Sensitive words (spec 01, options CheckSensitiveEnabled, CheckSensitiveOnPromptEnabled and
 * SensitiveWords, one word per line): prompts holding a listed word are refused before any
 * pricing, reservation or upstream call, so nothing is billed or logged as a charge.
 *
 * The matcher is an Aho-Corasick automaton over UTF-16 code units, built once per word list:
 * one pass over the text whatever the number of words (a failure link is followed at most as
 * many times as the pass went forward). Matching ignores case (both sides lower-cased).
 */
import type { OptionAccessors } from '@aigw/common';
import type { Json } from './protocols/openai.ts';
import { RelayError } from './relay-error.ts';

/** The words of a SensitiveWords option: one a line, trimmed, empty lines and duplicates dropped. */
export function parseWordList(raw: string | undefined): string[] {
  if (!raw) return [];
  const seen = new Set<string>();
  for (const line of raw.split(/\r?\n/)) {
    const w = line.trim().toLowerCase();
    if (w) seen.add(w);
  }
  return [...seen];
}

export interface WordMatcher {
  readonly size: number;
  /** The distinct listed words found in `text` (at most `limit`; order of their first end). */
  find(text: string, limit?: number): string[];
  /** Whether any listed word occurs in `text` (stops at the first). */
  test(text: string): boolean;
}

/**
 * The trie's edges: one open-addressing hash table keyed by (node, code unit) in typed arrays (no
 * object per node), sized for `chars` edges; the root's edges are a dense array, as most
 * characters of a text leave from the root. 0 is "no edge" (no edge leads back to the root).
 */
interface EdgeTable {
  readonly root: Int32Array;
  edge(s: number, c: number): number;
  add(s: number, c: number, next: number): void;
}

function edgeTable(chars: number): EdgeTable {
  const root = new Int32Array(0x10000);
  let cap = 16;
  while (cap < chars * 2) cap *= 2;
  const mask = cap - 1;
  const keyNode = new Int32Array(cap).fill(-1);
  const keyChar = new Uint16Array(cap);
  const value = new Int32Array(cap);
  const slot = (s: number, c: number) => (Math.imul(s, 0x9e3779b1) ^ Math.imul(c, 0x85ebca6b)) & mask;
  return {
    root,
    edge(s, c) {
      if (s === 0) return root[c] as number;
      for (let i = slot(s, c); ; i = (i + 1) & mask) {
        const k = keyNode[i] as number;
        if (k === -1) return 0;
        if (k === s && keyChar[i] === c) return value[i] as number;
      }
    },
    add(s, c, next) {
      if (s === 0) {
        root[c] = next;
        return;
      }
      let j = slot(s, c);
      while (keyNode[j] !== -1) j = (j + 1) & mask;
      keyNode[j] = s;
      keyChar[j] = c;
      value[j] = next;
    },
  };
}

/** The trie of the words: each node's children, the word ending at each node (-1 none), the distinct words. */
interface Trie {
  children: number[][];
  out: Int32Array;
  kept: string[];
}

function buildTrie(list: readonly string[], table: EdgeTable): Trie {
  const children: number[][] = [[]];
  /** Index of the word ending exactly at a node, or -1. */
  const outList: number[] = [-1];
  const kept: string[] = [];
  for (const w of list) {
    let s = 0;
    for (let i = 0; i < w.length; i++) {
      const c = w.charCodeAt(i);
      let next = table.edge(s, c);
      if (next === 0) {
        next = outList.length;
        outList.push(-1);
        children.push([]);
        (children[s] as number[]).push(next);
        table.add(s, c, next);
      }
      s = next;
    }
    if (outList[s] === -1) {
      outList[s] = kept.length;
      kept.push(w);
    }
  }
  return { children, out: Int32Array.from(outList), kept };
}

/**
 * The failure link of each node, and its dictionary link: the nearest node on the failure chain
 * (excluding itself) where a word ends, or 0.
 */
function failureLinks(trie: Trie, table: EdgeTable): { fail: Int32Array; dict: Int32Array } {
  const { children, out, kept } = trie;
  const n = out.length;
  const fail = new Int32Array(n);
  const dict = new Int32Array(n);
  const step = (s: number, c: number): number => {
    for (;;) {
      if (s === 0) return table.root[c] as number;
      const t = table.edge(s, c);
      if (t !== 0) return t;
      s = fail[s] as number;
    }
  };
  // Each node's parent and the code unit on the edge into it.
  const parent = new Int32Array(n);
  const char = new Uint16Array(n);
  for (let s = 0; s < n; s++) for (const t of children[s] as number[]) parent[t] = s;
  for (const w of kept) {
    let s = 0;
    for (let i = 0; i < w.length; i++) {
      s = table.edge(s, w.charCodeAt(i));
      char[s] = w.charCodeAt(i);
    }
  }
  // Failure links breadth first: a node's link is set after its parent's.
  const queue = new Int32Array(n);
  let tail = 0;
  for (const t of children[0] as number[]) queue[tail++] = t;
  for (let head = 0; head < tail; head++)
    for (const t of children[queue[head] as number] as number[]) queue[tail++] = t;
  for (let q = 0; q < tail; q++) {
    const t = queue[q] as number;
    const p = parent[t] as number;
    const f = p === 0 ? 0 : step(fail[p] as number, char[t] as number);
    fail[t] = f;
    dict[t] = (out[f] as number) >= 0 ? f : (dict[f] as number);
  }
  return { fail, dict };
}

/** The automaton's one pass over a text: the distinct words found, at most `limit`. */
function scanner(
  table: EdgeTable,
  trie: Trie,
  links: { fail: Int32Array; dict: Int32Array },
): (text: string, limit: number) => string[] {
  const { root, edge } = table;
  const { out, kept } = trie;
  const { fail, dict } = links;
  return (text, limit) => {
    const found: string[] = [];
    if (kept.length === 0) return found;
    const t = text.toLowerCase();
    let s = 0;
    let seen: Set<number> | undefined;
    for (let i = 0; i < t.length; i++) {
      const c = t.charCodeAt(i);
      // The failure step, inlined: the root's dense row first, then the edge table and failure links.
      for (;;) {
        if (s === 0) {
          s = root[c] as number;
          break;
        }
        const next = edge(s, c);
        if (next !== 0) {
          s = next;
          break;
        }
        s = fail[s] as number;
      }
      if (s === 0) continue;
      // Every word ending here: the node's own, then along the dictionary links.
      for (let k = (out[s] as number) >= 0 ? s : (dict[s] as number); k !== 0; k = dict[k] as number) {
        const w = out[k] as number;
        seen ??= new Set();
        if (seen.has(w)) continue;
        seen.add(w);
        found.push(kept[w] as string);
        if (found.length >= limit) return found;
      }
    }
    return found;
  };
}

/** Builds the automaton of `words` (already lower-cased and trimmed; see parseWordList). */
export function buildMatcher(words: readonly string[]): WordMatcher {
  const list = words.filter((w) => w.length > 0);
  let chars = 0;
  for (const w of list) chars += w.length;
  const table = edgeTable(chars);
  const trie = buildTrie(list, table);
  const scan = scanner(table, trie, failureLinks(trie, table));
  return {
    size: trie.kept.length,
    find: (text, limit = 5) => scan(text, limit),
    test: (text) => scan(text, 1).length > 0,
  };
}

/** Keys under which a request of any client format carries prompt text (images, audio and files are not followed). */
const TEXT_KEYS = [
  'messages',
  'content',
  'text',
  'system',
  'prompt',
  'input',
  'instructions',
  'query',
  'documents',
  'contents',
  'parts',
  'systemInstruction',
  'system_instruction',
] as const;
const MAX_DEPTH = 32;

/**
 * The prompt's texts of a request body in any client format: OpenAI chat (messages[].content,
 * strings or text parts), completions (prompt), embeddings, moderations and speech (input),
 * images (prompt), rerank (query, documents), Claude messages (system, content blocks, tool
 * results), Gemini (contents[].parts[].text, systemInstruction), Responses (instructions, input).
 * Image, audio and file parts, tool arguments and ids are not read.
 */
export function promptTexts(body: Json | FormData): string[] {
  const texts: string[] = [];
  if (body instanceof FormData) {
    const p = body.get('prompt');
    if (typeof p === 'string' && p) texts.push(p);
    return texts;
  }
  const walk = (v: unknown, depth: number) => {
    if (typeof v === 'string') {
      if (v) texts.push(v);
      return;
    }
    if (!v || typeof v !== 'object' || depth > MAX_DEPTH) return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
      return;
    }
    const o = v as Record<string, unknown>;
    for (const k of TEXT_KEYS) if (o[k] !== undefined) walk(o[k], depth + 1);
  };
  walk(body, 0);
  return texts;
}

/** What the screen reads of the options (the relay's options cache). */
export interface SensitiveOptions extends Pick<OptionAccessors, 'get' | 'bool'> {
  onChange(listener: (key: string, value: string) => void): void;
}

export interface SensitiveScreen {
  /** Throws a RelayError (400) when the prompt holds a listed word and prompt checks are on. */
  check(body: Json | FormData): void;
  /** The current automaton (tests, the benchmark). */
  matcher(): WordMatcher;
}

/**
 * The prompt check of the relay: on when CheckSensitiveEnabled and CheckSensitiveOnPromptEnabled
 * are both true. The automaton is built at start and rebuilt when SensitiveWords changes, never
 * on a request's path.
 */
export function sensitiveScreen(options: SensitiveOptions): SensitiveScreen {
  let current = buildMatcher(parseWordList(options.get('SensitiveWords')));
  options.onChange((key, value) => {
    if (key === 'SensitiveWords') current = buildMatcher(parseWordList(value));
  });
  return {
    check(body) {
      if (current.size === 0) return;
      if (!options.bool('CheckSensitiveEnabled') || !options.bool('CheckSensitiveOnPromptEnabled')) return;
      const found: string[] = [];
      for (const t of promptTexts(body)) {
        for (const w of current.find(t, 5 - found.length)) if (!found.includes(w)) found.push(w);
        if (found.length >= 5) break;
      }
      if (found.length > 0)
        throw new RelayError(400, `请求内容包含敏感词：${found.join('，')}`, 'sensitive_words_detected');
    },
    matcher: () => current,
  };
}
