/**
 * A Realtime session's two sockets joined: events pass both ways unchanged, except client prompt
 * events that the checks refuse (answered with an error event) and each upstream
 * `response.done`, billed from its usage. The session ends when either side closes.
 */
import type { Logger } from '@aigw/common';
import WebSocket from 'ws';
import type { Json, Usage } from '../../domain/protocols/openai.ts';
import { realtimeError, realtimeUsage } from '../../domain/realtime.ts';
import { RelayError } from '../../domain/relay-error.ts';
import { parseInput } from './parse-input.ts';
import type { SessionBilling } from './realtime-session.ts';
import type { Upstream } from './realtime-upstream.ts';
import { realtimePromptEvent } from './request-schemas.ts';

/** Client events whose text is a prompt: the item, the session's instructions, a response's overrides. */
const PROMPT_EVENTS = ['"conversation.item.create"', '"session.update"', '"response.create"'];

/** Close codes a peer may send on (1005, 1006 and 1015 are reserved for reports). */
export const sendable = (code: number) =>
  (code >= 1000 && code <= 1014 && ![1004, 1005, 1006].includes(code)) || (code >= 3000 && code < 5000);

/**
 * The error event answering a client prompt event holding a sensitive word, or whose item,
 * session or response is not an object (its schema: request-schemas.ts); undefined when the event
 * goes upstream (text that is not JSON goes on too: the upstream answers it).
 */
export function promptRefusal(buf: Buffer, screen: ((body: Json) => void) | undefined): Json | undefined {
  if (!PROMPT_EVENTS.some((t) => buf.includes(t))) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(buf.toString('utf8'));
  } catch {
    return undefined;
  }
  const eventId = (raw as { event_id?: unknown } | null)?.event_id;
  try {
    const ev = parseInput(realtimePromptEvent, raw);
    const carrier = ev.item ?? ev.session ?? ev.response;
    if (carrier) screen?.(carrier as Json);
  } catch (err) {
    if (!(err instanceof RelayError)) throw err;
    const e = realtimeError(err.message, err.code);
    return { ...e, error: { ...e.error, event_id: typeof eventId === 'string' ? eventId : null } };
  }
  return undefined;
}

/** A finished response: its usage, timings and number in the session. */
export interface FinishedResponse {
  usage: Usage;
  useTimeMs: number;
  firstTokenMs: number;
  n: number;
}

/**
 * Follows the upstream's text events for the responses' timings (from response.created to the
 * first delta and to response.done); returns each response.done that carries usage. Only a few
 * event types are parsed; audio deltas (large) are not.
 */
export function responseClock(
  now: () => number = () => performance.now(),
): (buf: Buffer) => FinishedResponse | undefined {
  let responses = 0;
  let responseStart = now();
  let firstToken = 0;
  return (buf) => {
    if (buf.includes('"response.created"')) {
      responseStart = now();
      firstToken = 0;
    } else if (!firstToken && buf.includes('.delta"')) firstToken = now();
    else if (buf.includes('"response.done"')) {
      let event: unknown;
      try {
        event = JSON.parse(buf.toString('utf8'));
      } catch {
        return undefined;
      }
      const usage = realtimeUsage(event);
      if (!usage) return undefined;
      const t = now();
      responses++;
      return {
        usage,
        useTimeMs: Math.round(t - responseStart),
        firstTokenMs: firstToken ? Math.round(firstToken - responseStart) : 0,
        n: responses,
      };
    }
    return undefined;
  };
}

export interface BridgeContext {
  /** The open sessions' stops (the server's close() calls each). */
  open: Set<() => void>;
  screen?(body: Json): void;
  logger: Logger;
}

/** Joins the client's socket and the upstream's until either ends. */
export function bridge(client: WebSocket, up: Upstream, session: SessionBilling, ctx: BridgeContext): void {
  const upstream = up.ws;
  const clock = responseClock();
  let ended = false;
  const end = (code: number, reason: string) => {
    if (ended) return;
    ended = true;
    ctx.open.delete(stop);
    const c = sendable(code) ? code : 1000;
    const r = Buffer.byteLength(reason) <= 123 ? reason : '';
    for (const ws of [client, upstream]) {
      if (ws.readyState === WebSocket.OPEN) ws.close(c, r);
      else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
    }
    session.done();
  };
  const stop = () => end(1001, 'relay shutting down');
  ctx.open.add(stop);

  client.on('message', (data, isBinary) => {
    if (upstream.readyState !== WebSocket.OPEN) return;
    if (ctx.screen && !isBinary) {
      const refusal = promptRefusal(data as Buffer, ctx.screen);
      if (refusal) {
        if (client.readyState === WebSocket.OPEN) client.send(JSON.stringify(refusal));
        return;
      }
    }
    upstream.send(data as Buffer, { binary: isBinary });
  });
  const fromUpstream = (data: Buffer, isBinary: boolean) => {
    if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
    if (isBinary) return;
    const done = clock(data);
    if (!done) return;
    session
      .bill(done.usage, done.useTimeMs, done.firstTokenMs, done.n)
      .then((refusal) => {
        if (!refusal || ended) return;
        if (client.readyState === WebSocket.OPEN)
          client.send(JSON.stringify(realtimeError(refusal.message, refusal.code, 'insufficient_quota')));
        end(1008, refusal.code);
      })
      .catch((err: unknown) => ctx.logger.error({ err }, 'realtime billing failed'));
  };
  up.release();
  for (const e of up.early.splice(0)) fromUpstream(e.data, e.binary);
  upstream.on('message', (data, isBinary) => fromUpstream(data as Buffer, isBinary));
  if (upstream.readyState !== WebSocket.OPEN) end(1011, 'upstream closed');
  client.on('close', (code, reason) => end(code, reason.toString('utf8')));
  upstream.on('close', (code, reason) => end(code, reason.toString('utf8')));
  client.on('error', (err) => {
    ctx.logger.debug({ err }, 'realtime client socket error');
    end(1011, '');
  });
  upstream.on('error', (err) => {
    ctx.logger.warn({ err }, 'realtime upstream socket error');
    if (client.readyState === WebSocket.OPEN)
      client.send(JSON.stringify(realtimeError('上游连接中断', 'upstream_error', 'server_error')));
    end(1011, 'upstream error');
  });
}
