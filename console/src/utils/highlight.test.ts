import { describe, expect, it } from 'vitest';
import { highlightCode } from './highlight.ts';

describe('code highlighting', () => {
  it('when code holds keywords, strings, numbers and comments, then each is wrapped and the rest escaped', () => {
    const html = highlightCode('const a = "x<y"; // note\nreturn 42 < b;', 'js');
    expect(html).toBe(
      '<span class="aigw-hl-keyword">const</span> a = <span class="aigw-hl-string">&quot;x&lt;y&quot;</span>; ' +
        '<span class="aigw-hl-comment">// note</span>\n<span class="aigw-hl-keyword">return</span> ' +
        '<span class="aigw-hl-number">42</span> &lt; b;',
    );
  });
  it('when # starts a line, then it is a comment in Python and plain text in C', () => {
    expect(highlightCode('# hi', 'python')).toBe('<span class="aigw-hl-comment"># hi</span>');
    expect(highlightCode('#include <x>', 'c')).toBe('#include &lt;x&gt;');
  });
});
