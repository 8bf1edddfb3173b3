import { useMemo } from 'react';
import { frameUrl, markdownToSafeHtml } from '../../utils/rich-content.ts';
import './style/index.css';

interface Props {
  /** Markdown with inline HTML, or a single http(s) URL. */
  content: string;
  /** Accessible name of the frame when the content is a URL. */
  title: string;
  className?: string;
}

/** An admin-written text: a framed page when it is a URL, sanitized Markdown/HTML otherwise. */
export default function RichContent({ content, title, className }: Props) {
  const url = frameUrl(content);
  const html = useMemo(() => (url ? '' : markdownToSafeHtml(content)), [url, content]);
  const classes = ['aigw-rich-content', className].filter(Boolean).join(' ');
  if (url) return <iframe className={`${classes} aigw-rich-content-frame`} src={url} title={title} />;
  // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitized by markdownToSafeHtml (DOMPurify)
  return <div className={classes} dangerouslySetInnerHTML={{ __html: html }} />;
}
