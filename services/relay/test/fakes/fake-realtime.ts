/**
 * A fake of OpenAI's Realtime API over WebSocket (GA event names), for tests: OpenAI's
 * `/v1/realtime?model=...` with a bearer key and Azure's
 * `/openai/realtime?api-version=...&deployment=...` with `api-key`; a wrong key is refused
 * during the handshake with 401 and OpenAI's error body.
 *
 * Per session: `session.created` on connect; `session.update` -> `session.updated`;
 * `conversation.item.create` -> `conversation.item.created`; `input_audio_buffer.append` /
 * `commit` -> `input_audio_buffer.committed`; `response.create` -> `response.created`,
 * `response.output_item.added`, `response.content_part.added`, one
 * `response.output_text.delta` per word (or, with audio output, `response.output_audio.delta`
 * and `response.output_audio_transcript.delta`), the matching `.done` events, then
 * `response.done` with the configured usage. Malformed JSON gets an `error` event.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

export interface RealtimeUsageSpec {
  inputText: number;
  inputAudio: number;
  cachedText: number;
  outputText: number;
  outputAudio: number;
}

export interface FakeRealtime {
  url: string;
  /** Handshakes as received (path with query, headers). */
  handshakes: { path: string; headers: IncomingMessage['headers'] }[];
  /** Client events as received, in order, across sessions. */
  events: { type: string; [k: string]: unknown }[];
  /** Usage reported by the next `response.done` events (one entry per response, the last repeats). */
  setUsage(u: RealtimeUsageSpec[]): void;
  /** Sessions currently open. */
  open(): number;
  close(): Promise<void>;
}

export async function startFakeRealtime(opts: { key: string; reply?: string }): Promise<FakeRealtime> {
  const reply = opts.reply ?? 'Hello from the realtime fake';
  let usages: RealtimeUsageSpec[] = [{ inputText: 10, inputAudio: 0, cachedText: 0, outputText: 5, outputAudio: 0 }];
  let served = 0;
  const handshakes: FakeRealtime['handshakes'] = [];
  const events: FakeRealtime['events'] = [];
  let seq = 0;
  const id = (prefix: string) => `${prefix}_${(++seq).toString(36).padStart(6, '0')}`;

  const wss = new WebSocketServer({ noServer: true });
  const server: Server = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'Not found', type: 'invalid_request_error', code: null } }));
  });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    handshakes.push({ path: req.url ?? '/', headers: req.headers });
    const azure = url.pathname === '/openai/realtime';
    const fail = (status: number, message: string) => {
      const body = JSON.stringify({
        error: { message, type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
      });
      socket.end(
        `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Not Found'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    };
    if (!azure && url.pathname !== '/v1/realtime') return fail(404, 'Not found');
    const ok = azure ? req.headers['api-key'] === opts.key : req.headers.authorization === `Bearer ${opts.key}`;
    if (!ok) return fail(401, 'Incorrect API key provided');
    const model = azure ? url.searchParams.get('deployment') : url.searchParams.get('model');
    if (!model || (azure && !url.searchParams.get('api-version')))
      return fail(404, 'missing model, deployment or api-version');

    wss.handleUpgrade(req, socket, head, (ws) => {
      const send = (e: Record<string, unknown>) => ws.send(JSON.stringify({ event_id: id('event'), ...e }));
      const session = {
        id: id('sess'),
        object: 'realtime.session',
        type: 'realtime',
        model,
        output_modalities: ['text'] as string[],
        instructions: '',
      };
      send({ type: 'session.created', session });
      let audioBytes = 0;
      ws.on('message', (data, isBinary) => {
        if (isBinary)
          return send({
            type: 'error',
            error: { type: 'invalid_request_error', code: 'binary', message: 'binary frames are not accepted' },
          });
        let ev: { type?: string; [k: string]: unknown };
        try {
          ev = JSON.parse(String(data));
        } catch {
          return send({
            type: 'error',
            error: { type: 'invalid_request_error', code: 'invalid_json', message: 'Invalid JSON' },
          });
        }
        events.push(ev as FakeRealtime['events'][number]);
        switch (ev.type) {
          case 'session.update': {
            const s = (ev.session ?? {}) as Record<string, unknown>;
            Object.assign(session, s);
            return send({ type: 'session.updated', session });
          }
          case 'conversation.item.create': {
            const item = { id: id('item'), status: 'completed', ...(ev.item as object) };
            return send({ type: 'conversation.item.created', previous_item_id: null, item });
          }
          case 'input_audio_buffer.append':
            audioBytes += Buffer.from(String(ev.audio ?? ''), 'base64').length;
            return;
          case 'input_audio_buffer.commit':
            if (audioBytes === 0)
              return send({
                type: 'error',
                error: {
                  type: 'invalid_request_error',
                  code: 'input_audio_buffer_commit_empty',
                  message: 'buffer is empty',
                },
              });
            audioBytes = 0;
            return send({ type: 'input_audio_buffer.committed', previous_item_id: null, item_id: id('item') });
          case 'response.create':
            return respond(((ev.response ?? {}) as { output_modalities?: string[] }).output_modalities);
          default:
            return;
        }
      });

      function respond(modalities: string[] | undefined) {
        const audio = (modalities ?? session.output_modalities).includes('audio');
        const u = usages[Math.min(served, usages.length - 1)] as RealtimeUsageSpec;
        served++;
        const responseId = id('resp');
        const itemId = id('item');
        const base = { response_id: responseId, item_id: itemId, output_index: 0, content_index: 0 };
        send({
          type: 'response.created',
          response: { id: responseId, object: 'realtime.response', status: 'in_progress', output: [], usage: null },
        });
        send({
          type: 'response.output_item.added',
          response_id: responseId,
          output_index: 0,
          item: { id: itemId, type: 'message', role: 'assistant', content: [] },
        });
        send({ type: 'response.content_part.added', ...base, part: { type: audio ? 'audio' : 'text', text: '' } });
        const words = reply.split(' ');
        words.forEach((w, i) => {
          const delta = i === 0 ? w : ` ${w}`;
          if (audio) {
            send({ type: 'response.output_audio.delta', ...base, delta: Buffer.from(`pcm:${w}`).toString('base64') });
            send({ type: 'response.output_audio_transcript.delta', ...base, delta });
          } else send({ type: 'response.output_text.delta', ...base, delta });
        });
        if (audio) {
          send({ type: 'response.output_audio.done', ...base });
          send({ type: 'response.output_audio_transcript.done', ...base, transcript: reply });
        } else send({ type: 'response.output_text.done', ...base, text: reply });
        const part = audio ? { type: 'audio', transcript: reply } : { type: 'text', text: reply };
        send({ type: 'response.content_part.done', ...base, part });
        const item = { id: itemId, type: 'message', role: 'assistant', status: 'completed', content: [part] };
        send({ type: 'response.output_item.done', response_id: responseId, output_index: 0, item });
        const input = u.inputText + u.inputAudio;
        const output = u.outputText + u.outputAudio;
        send({
          type: 'response.done',
          response: {
            id: responseId,
            object: 'realtime.response',
            status: 'completed',
            output: [item],
            usage: {
              total_tokens: input + output,
              input_tokens: input,
              output_tokens: output,
              input_token_details: {
                text_tokens: u.inputText,
                audio_tokens: u.inputAudio,
                cached_tokens: u.cachedText,
                cached_tokens_details: { text_tokens: u.cachedText, audio_tokens: 0 },
              },
              output_token_details: { text_tokens: u.outputText, audio_tokens: u.outputAudio },
            },
          },
        });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    handshakes,
    events,
    setUsage(u) {
      usages = u;
      served = 0;
    },
    open: () => wss.clients.size,
    async close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
