import DOMPurify from 'dompurify';
import { Marked, marked } from 'marked';
import { highlightCode } from './highlight.ts';

/**
 * The admin's free-text settings (About, HomePageContent, Notice) are Markdown that may carry
 * HTML, or a single web address to show in a frame. Everything is sanitized before it reaches the
 * page: no scripts, no event handlers, no javascript: links, no frames, style sheets or forms.
 */

/** The address to frame when the whole (trimmed) text is one http(s) URL; otherwise undefined. */
export function frameUrl(text: string): string | undefined {
  const trimmed = text.trim();
  if (!/^https?:\/\/\S+$/i.test(trimmed)) return undefined;
  try {
    return new URL(trimmed).href;
  } catch {
    return undefined;
  }
}

/** Markdown (GitHub flavour, single line breaks kept, inline HTML passed through) to HTML. Not yet safe. */
export function markdownToHtml(text: string): string {
  return marked.parse(text, { async: false, gfm: true, breaks: true });
}

const escapeHtml = (html: string) =>
  html.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

let hooked = false;

/** HTML that can run nothing; where no DOM can sanitize it, the markup is escaped and shows as text. */
export function sanitizeHtml(html: string): string {
  if (!DOMPurify.isSupported) return escapeHtml(html);
  if (!hooked) {
    hooked = true;
    // Links to other sites open in a new tab without handing it this window.
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A' && /^https?:/i.test(node.getAttribute('href') ?? '')) {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      }
    });
  }
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    // Style sheets would restyle the whole console and forms could pose as its own; inline styles stay.
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select'],
  });
}

/** Markdown (with inline HTML) to sanitized HTML. */
export function markdownToSafeHtml(text: string): string {
  return sanitizeHtml(markdownToHtml(text));
}

/** Markdown whose fenced code blocks come out highlighted (the playground's replies). */
const replyMarked = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    code({ text, lang }) {
      const language = (lang ?? '').trim().split(/\s+/)[0] ?? '';
      const label = language ? ` class="language-${language.replace(/[^\w+-]/g, '')}"` : '';
      return `<pre class="aigw-code"><code${label}>${highlightCode(text, language)}</code></pre>\n`;
    },
  },
});

/** A model's reply (Markdown, maybe HTML) to sanitized HTML with highlighted code blocks. */
export function replyToSafeHtml(text: string): string {
  return sanitizeHtml(replyMarked.parse(text, { async: false }));
}
