import { StringDecoder } from 'node:string_decoder';

/** One server-sent event: its `event:` name (empty when none) and its joined `data:` lines. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Incremental SSE parser: feed it bytes as they arrive, get back the events completed so far.
 * Keeps only the unfinished tail between calls, so memory stays bounded by one event.
 */
export function createSseParser(): { push(chunk: Uint8Array | string): SseEvent[]; end(): SseEvent[] } {
  // StringDecoder keeps a UTF-8 sequence split across chunks for the next one, like TextDecoder
  // with { stream: true }, at a fraction of its cost per chunk.
  const decoder = new StringDecoder('utf8');
  let buf = '';
  let event = '';
  let data: string[] = [];

  const takeLines = (final: boolean): SseEvent[] => {
    const out: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const nl = buf.indexOf('\n', start);
      if (nl < 0) break;
      let line = buf.slice(start, nl);
      start = nl + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (data.length > 0 || event) out.push({ event, data: data.join('\n') });
        event = '';
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
      } else if (line.startsWith('event:')) {
        event = line.slice(6).trim();
      }
      // id:, retry: and comments (":") carry nothing the relay needs.
    }
    buf = buf.slice(start);
    if (final) {
      if (buf.startsWith('data:')) data.push(buf.slice(5).trimStart());
      buf = '';
      if (data.length > 0) out.push({ event, data: data.join('\n') });
      data = [];
      event = '';
    }
    return out;
  };

  return {
    push(chunk) {
      buf += typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
      return takeLines(false);
    },
    end() {
      buf += decoder.end();
      return takeLines(true);
    },
  };
}

/** Incremental newline-delimited JSON parser (Ollama's streams): one parsed value per line. */
export function createNdjsonParser(): { push(chunk: Uint8Array | string): unknown[]; end(): unknown[] } {
  const decoder = new StringDecoder('utf8');
  let buf = '';
  const take = (final: boolean): unknown[] => {
    const out: unknown[] = [];
    const lines = buf.split('\n');
    buf = final ? '' : (lines.pop() ?? '');
    for (const line of lines) {
      const t = line.trim();
      if (t) out.push(JSON.parse(t));
    }
    return out;
  };
  return {
    push(chunk) {
      buf += typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
      return take(false);
    },
    end() {
      buf += decoder.end();
      return take(true);
    },
  };
}

/** Formats one SSE event. */
export function sse(data: string, event?: string): string {
  return event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`;
}
