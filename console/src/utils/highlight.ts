/**
 * A small code highlighter for the playground's replies: comments, strings, numbers and the
 * keywords common to the languages models answer in (JavaScript/TypeScript, Python, Go, Java, C,
 * Rust, shell, SQL). It returns escaped HTML with <span class="aigw-hl-…"> around tokens; good
 * enough to read code, not a parser.
 */

const KEYWORDS = new Set(
  (
    'as async await break case catch class const continue def default del do elif else enum export extends ' +
    'false final finally fn for from func function go if impl implements import in interface is lambda let ' +
    'match mod module mut new nil None not null or package pass private protected pub public raise return ' +
    'self select static struct super switch this throw true True False try type typeof use var void while ' +
    'with yield and where from insert update delete create table into values'
  ).split(' '),
);

const TOKEN =
  /(\/\*[\s\S]*?\*\/|\/\/[^\n]*|#[^\n]*|--[^\n]*)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_$][\w$]*)/g;

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** Languages whose line comments start with # or --, where those are not operators. */
const HASH_COMMENTS = /^(py|python|sh|bash|shell|zsh|rb|ruby|yaml|yml|toml|r|perl|dockerfile|makefile)$/i;
const DASH_COMMENTS = /^(sql|lua|haskell|hs)$/i;

/** Escaped HTML of `code` with its tokens wrapped in spans. */
export function highlightCode(code: string, lang = ''): string {
  let out = '';
  let last = 0;
  for (const m of code.matchAll(TOKEN)) {
    const [text, comment, string, number, word] = m;
    const at = m.index ?? 0;
    let kind = '';
    if (comment) {
      const hash = comment.startsWith('#');
      const dash = comment.startsWith('--');
      if ((hash && !HASH_COMMENTS.test(lang)) || (dash && !DASH_COMMENTS.test(lang))) {
        // Not a comment in this language: the rest of the line stays plain text.
        continue;
      }
      kind = 'comment';
    } else if (string) kind = 'string';
    else if (number) kind = 'number';
    else if (word && KEYWORDS.has(word)) kind = 'keyword';
    if (!kind) continue;
    out += escapeHtml(code.slice(last, at));
    out += `<span class="aigw-hl-${kind}">${escapeHtml(text)}</span>`;
    last = at + text.length;
  }
  return out + escapeHtml(code.slice(last));
}
