/**
 * iFlytek Spark (type 18): key `APPID|APISecret|APIKey` (spec 01 section 5), `other` = the API
 * version (v1.1, v2.1 the default, v3.1, v3.5, v4.0, pro-128k, max-32k); a model named
 * `SparkDesk-vX.Y` picks its version itself. Each call is a WebSocket to `{base}/{version}/chat`
 * whose URL carries the HMAC-SHA256 authorization (host, date and request line signed with the
 * APISecret), run by `send` in place of HTTP (protocols/spark.ts for the frames).
 */
import { createHmac } from 'node:crypto';
import { WebSocket } from 'ws';
import { UpstreamFailure } from '../exchange/failure.ts';
import type { UpstreamRequest, UpstreamResponse } from '../exchange/ports.ts';
import type { SparkFrame } from '../protocols/spark.ts';
import { type Adaptor, baseOf, type RelayMode } from './types.ts';

/** Version -> its path and the `domain` its frames name. */
const VERSIONS: Record<string, { path: string; domain: string }> = {
  'v1.1': { path: '/v1.1/chat', domain: 'lite' },
  'v2.1': { path: '/v2.1/chat', domain: 'generalv2' },
  'v3.1': { path: '/v3.1/chat', domain: 'generalv3' },
  'v3.5': { path: '/v3.5/chat', domain: 'generalv3.5' },
  'v4.0': { path: '/v4.0/chat', domain: '4.0Ultra' },
  'pro-128k': { path: '/chat/pro-128k', domain: 'pro-128k' },
  'max-32k': { path: '/chat/max-32k', domain: 'max-32k' },
};

/** The API version of a call: the model's own (`SparkDesk-v3.5`), else the channel's, else v2.1. */
export function sparkVersion(model: string, other: string): string {
  const m = /^SparkDesk-(v\d\.\d)$/i.exec(model);
  return m?.[1]?.toLowerCase() ?? (other.trim() || 'v2.1');
}

/**
 * The signed WebSocket URL: `authorization` is base64 of `api_key="..", algorithm="hmac-sha256",
 * headers="host date request-line", signature=".."`, the signature being base64 HMAC-SHA256
 * (APISecret) of `host: {host}\ndate: {date}\nGET {path} HTTP/1.1`.
 */
export function signSparkUrl(url: string, apiKey: string, apiSecret: string, date = new Date()): string {
  const u = new URL(url);
  const rfc1123 = date.toUTCString();
  const origin = `host: ${u.host}\ndate: ${rfc1123}\nGET ${u.pathname} HTTP/1.1`;
  const signature = createHmac('sha256', apiSecret).update(origin).digest('base64');
  const authorization = Buffer.from(
    `api_key="${apiKey}", algorithm="hmac-sha256", headers="host date request-line", signature="${signature}"`,
  ).toString('base64');
  const q = new URLSearchParams({ authorization, date: rfc1123, host: u.host });
  return `${u.origin}${u.pathname}?${q}`;
}

function keyParts(key: string): [string, string, string] {
  const [appId = '', secret = '', apiKey = ''] = key.split('|').map((p) => p.trim());
  if (!appId || !secret || !apiKey) throw new UpstreamFailure(401, '讯飞星火渠道密钥格式应为 APPID|APISecret|APIKey');
  return [appId, secret, apiKey];
}

/** A finished answer's frames joined into one frame-shaped answer (or the error frame). */
function joinFrames(frames: SparkFrame[]): SparkFrame {
  const failed = frames.find((f) => Number(f.header?.code ?? 0) !== 0);
  if (failed) return failed;
  const last = frames.at(-1) ?? {};
  const content = frames.map((f) => (f.payload?.choices?.text ?? []).map((t) => t.content ?? '').join('')).join('');
  return {
    header: last.header,
    payload: {
      choices: { status: 2, seq: 0, text: [{ content, role: 'assistant', index: 0 }] },
      usage: last.payload?.usage,
    },
  };
}

/** Runs one call over a WebSocket; frames come out as SSE events (streams) or one joined answer. */
function sendOverWebSocket(req: UpstreamRequest): Promise<UpstreamResponse> {
  const stream = req.headers.accept === 'text/event-stream';
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(req.url.replace(/^http/, 'ws'), { handshakeTimeout: 30_000, perMessageDeflate: false });
    const frames: string[] = [];
    let done = false;
    let failure: Error | undefined;
    let wake: (() => void) | undefined;
    const finish = (err?: Error) => {
      if (!done && err) failure = err;
      done = true;
      wake?.();
    };
    const unlink = req.cancel?.onAbort(() => {
      ws.terminate();
      finish(new Error('aborted'));
      reject(new Error('aborted'));
    });

    ws.on('unexpected-response', (_r, res) => {
      // The handshake was refused (a bad signature is 401, a stale date 403): an HTTP answer.
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        unlink?.();
        const body = Buffer.concat(parts);
        resolve({
          status: res.statusCode ?? 502,
          headers: res.headers,
          body: (async function* () {
            yield body;
          })(),
          bytes: async () => body,
        });
        ws.terminate();
      });
    });
    ws.on('error', (err) => {
      finish(err);
      reject(err);
    });
    ws.on('close', () => {
      unlink?.();
      finish(new Error('讯飞星火连接在回答结束前关闭'));
    });
    ws.on('message', (data) => {
      const text = String(data);
      frames.push(text);
      let f: SparkFrame = {};
      try {
        f = JSON.parse(text) as SparkFrame;
      } catch {
        // passed on; the protocol reports it
      }
      if (f.header?.status === 2 || Number(f.header?.code ?? 0) !== 0) {
        finish();
        ws.close();
      } else wake?.();
    });
    ws.on('open', () => {
      ws.send(String(req.body));
      async function* texts(): AsyncGenerator<string> {
        for (;;) {
          const next = frames.shift();
          if (next !== undefined) {
            yield next;
            continue;
          }
          if (done) {
            if (failure) throw failure;
            return;
          }
          await new Promise<void>((r) => {
            wake = r;
          });
          wake = undefined;
        }
      }
      if (stream) {
        resolve({
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          body: (async function* () {
            for await (const t of texts()) yield Buffer.from(`data: ${t}\n\n`);
          })(),
          bytes: async () => {
            throw new Error('stream');
          },
        });
        return;
      }
      const bytes = async () => {
        const all: SparkFrame[] = [];
        for await (const t of texts()) all.push(JSON.parse(t) as SparkFrame);
        return Buffer.from(JSON.stringify(joinFrames(all)));
      };
      resolve({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: (async function* () {
          yield await bytes();
        })(),
        bytes,
      });
    });
  });
}

export const spark: Adaptor = {
  name: 'Spark',
  protocol: 'spark',
  modes: new Set<RelayMode>(['chat']),
  defaultBaseUrl: 'wss://spark-api.xf-yun.com',
  noStreamOptions: true,
  target: (ch, _mode, model) => {
    const v = VERSIONS[sparkVersion(model, ch.other)];
    return { url: `${baseOf(ch, spark)}${v?.path ?? '/v2.1/chat'}`, headers: {} };
  },
  async prepare(call, ctx) {
    const [appId, secret, apiKey] = keyParts(ctx.channel.key);
    const version = sparkVersion(ctx.model, ctx.channel.other);
    const v = VERSIONS[version];
    if (!v) throw new UpstreamFailure(500, `讯飞星火渠道版本不支持: ${version}`);
    const body = JSON.parse(String(call.body)) as {
      header: { app_id: string };
      parameter: { chat: { domain: string } };
    };
    body.header.app_id = appId;
    body.parameter.chat.domain = v.domain;
    return { url: signSparkUrl(call.url, apiKey, secret), headers: { ...call.headers }, body: JSON.stringify(body) };
  },
  send: sendOverWebSocket,
};
