/**
 * The playground's streaming call: POST /pg/chat/completions (session auth, New-Api-User) and
 * the message states of spec 02 section 4: a new assistant message starts as loading, becomes
 * incomplete as chunks arrive, then complete at the end marker or on a no-choice chunk, or error.
 */
import { serverText } from '../../locale/server-messages.ts';
import { getStoredUserId } from '../../store/user-storage.ts';

export type MessageStatus = 'loading' | 'incomplete' | 'complete' | 'error';

export interface ChatMessage {
  id: string;
  role: 'system' | 'user' | 'assistant';
  content: string;
  createAt: number;
  status: MessageStatus;
}

export interface PlaygroundSettings {
  model: string;
  group: string;
  max_tokens: number;
  temperature: number;
  system: string;
}

export const DEFAULT_SYSTEM_PROMPT = 'You are a helpful assistant.';

export const DEFAULT_SETTINGS: PlaygroundSettings = {
  model: 'gpt-4o-mini',
  group: '',
  max_tokens: 0,
  temperature: 0,
  system: DEFAULT_SYSTEM_PROMPT,
};

/** The request body of one turn. */
export function chatBody(s: PlaygroundSettings, history: ChatMessage[]) {
  const messages = [
    ...(s.system.trim() ? [{ role: 'system', content: s.system }] : []),
    ...history
      .filter((m) => m.role !== 'system' && m.status !== 'error')
      .map((m) => ({ role: m.role, content: m.content })),
  ];
  return {
    messages,
    stream: true,
    model: s.model,
    group: s.group,
    ...(s.max_tokens > 0 ? { max_tokens: Math.floor(s.max_tokens) } : {}),
    ...(s.temperature > 0 ? { temperature: s.temperature } : {}),
  };
}

/** Feeds SSE text to `onEvent` as complete `data:` payloads arrive; returns the unfinished tail. */
export function splitEvents(buffer: string, onData: (data: string) => void): string {
  let rest = buffer;
  for (;;) {
    const end = rest.indexOf('\n\n');
    if (end < 0) return rest;
    const event = rest.slice(0, end);
    rest = rest.slice(end + 2);
    const data = event
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (data) onData(data);
  }
}

/**
 * Streams one answer. `update` gets the growing content and the status; resolves when the
 * stream ended (complete) or failed (error, with the error text as the content). Aborting the
 * signal (the stop button) closes the connection and completes the answer with what arrived.
 */
export async function streamChat(
  body: unknown,
  update: (content: string, status: MessageStatus) => void,
  signal?: AbortSignal,
): Promise<void> {
  let content = '';
  let res: Response;
  try {
    res = await fetch('/pg/chat/completions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'New-Api-User': String(getStoredUserId()) },
      credentials: 'include',
      body: JSON.stringify(body),
      signal,
    });
  } catch (err) {
    // Stopped before the answer began: nothing was produced.
    if (signal?.aborted) update('', 'complete');
    else update(String(err instanceof Error ? err.message : err), 'error');
    return;
  }
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => '');
    let message = text;
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
    } catch {
      // plain text
    }
    update(serverText(message) || `HTTP ${res.status}`, 'error');
    return;
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let done = false;
  let failed = false;
  const onData = (data: string) => {
    if (done || failed) return;
    if (data === '[DONE]') {
      done = true;
      return;
    }
    let chunk: { choices?: { delta?: { content?: string } }[]; error?: unknown };
    try {
      chunk = JSON.parse(data);
    } catch {
      return;
    }
    if (chunk.error) {
      failed = true;
      update(`${content}\n${JSON.stringify(chunk.error)}`, 'error');
      return;
    }
    if (!chunk.choices || chunk.choices.length === 0) {
      done = true;
      return;
    }
    const piece = chunk.choices[0]?.delta?.content;
    if (piece) {
      content += piece;
      update(content, 'incomplete');
    }
  };
  try {
    for (;;) {
      const { value, done: eof } = await reader.read();
      if (eof) break;
      buffer = splitEvents(buffer + decoder.decode(value, { stream: true }), onData);
      if (done || failed) break;
    }
  } catch (err) {
    // Stopped by the user: what arrived so far is the answer.
    if (signal?.aborted) update(content, 'complete');
    else if (!failed) update(`${content}\n${String(err instanceof Error ? err.message : err)}`, 'error');
    return;
  }
  if (!failed) update(content, 'complete');
  reader.cancel().catch(() => undefined);
}
