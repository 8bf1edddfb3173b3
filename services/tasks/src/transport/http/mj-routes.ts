/**
 * The midjourney-proxy API on plain node:http: `/mj/...` and the mode prefixes `/fast/mj`,
 * `/relax/mj`, `/turbo/mj`. Answers are midjourney-proxy JSON; refusals `{code, description}`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { clientAddress } from '@aigw/common';
import { keyOf } from '../../domain/authorize.ts';
import { MjError } from '../../domain/mj-error.ts';
import { fetchMj, forwardBase, imageSeedMj, listMjByCondition } from '../../domain/mj-queries.ts';
import { modeOfPath, SUBMIT_KINDS, type SubmitKind } from '../../domain/mj-rules.ts';
import { type MjAnswer, type MjDeps, submitMj } from '../../domain/mj-submit.ts';
import { mjListBody, mjSubmitBody, readInput } from './task-input.ts';

const MAX_BODY = 32 * 1024 * 1024;

export function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body ?? null);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(text);
}

/** A path segment decoded; a bad escape (`%E0%A4%A`) is the client's error (400), not the server's. */
export function pathId(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new MjError(400, 4, '请求的编码无效');
  }
}

/** The whole request body, refused beyond 32 MiB. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw new MjError(413, 4, '请求体过大');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * The body as a JSON object (empty: {}). An array, a string or a number is refused with the
 * message the relay and the gateway give, rather than read as an empty submit.
 */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const raw = await readBody(req);
  if (raw.length === 0) return {};
  let v: unknown;
  try {
    v = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new MjError(400, 4, '请求体不是有效的 JSON');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new MjError(400, 4, '请求体必须是 JSON 对象');
  return v as Record<string, unknown>;
}

/**
 * The client's address: the socket's peer, or what X-Forwarded-For says when that peer is one of
 * the configured proxies (TRUSTED_PROXIES: the gateway, the ingress). Token IP allow-lists and the
 * logs' ip use it, so a caller that reaches this port directly cannot name another address.
 */
export function clientIp(req: IncomingMessage, trusted: (addr: string) => boolean): string {
  return clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trusted);
}

/** Returns a handler that answers midjourney-proxy paths and false for others. */
export function mjRoutes(
  d: MjDeps,
  opts: { trusted: (addr: string) => boolean; image(url: string): Promise<Response> },
) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://x');
    const m = modeOfPath(url.pathname);
    if (!m) return false;
    const key = keyOf(
      typeof req.headers.authorization === 'string' ? req.headers.authorization : undefined,
      typeof req.headers['mj-api-secret'] === 'string' ? req.headers['mj-api-secret'] : undefined,
    );
    const ip = clientIp(req, opts.trusted);
    const rest = m.rest;
    try {
      let answer: MjAnswer | undefined;
      const submit = /^\/submit\/([a-z-]+)$/.exec(rest);
      const task = /^\/task\/([^/]+)\/(fetch|image-seed)$/.exec(rest);
      const image = /^\/image\/([^/]+)$/.exec(rest);
      // Face swap lives at /insight-face/swap; /submit/swap-face is not an endpoint.
      const kind = rest === '/insight-face/swap' ? 'swap-face' : submit?.[1] !== 'swap-face' ? submit?.[1] : undefined;
      if (req.method === 'POST' && kind && (SUBMIT_KINDS as readonly string[]).includes(kind)) {
        answer = await submitMj(d, {
          kind: kind as SubmitKind,
          ...(m.mode ? { mode: m.mode } : {}),
          body: await readInput(req, mjSubmitBody),
          key,
          ip,
        });
      } else if (req.method === 'GET' && task?.[2] === 'fetch') {
        answer = await fetchMj(d, key, ip, pathId(task[1] as string));
      } else if (req.method === 'GET' && task?.[2] === 'image-seed') {
        answer = await imageSeedMj(d, key, ip, pathId(task[1] as string));
      } else if (req.method === 'POST' && rest === '/task/list-by-condition') {
        answer = await listMjByCondition(d, key, ip, await readInput(req, mjListBody));
      } else if (req.method === 'GET' && image && !m.mode) {
        await proxyImage(d, pathId(image[1] as string), res, opts.image);
        return true;
      } else {
        answer = { status: 404, body: { code: 4, description: '接口不存在' } };
      }
      send(res, answer.status, answer.body);
    } catch (err) {
      if (err instanceof MjError) send(res, err.status, { code: err.code, description: err.description, result: null });
      // A bad escape in the path (decodeURIComponent) is the client's error, not the server's.
      else if (err instanceof URIError) send(res, 400, { code: 4, description: '请求的编码无效', result: null });
      else {
        d.onError(err, 'midjourney request failed');
        send(res, 500, { code: 4, description: '服务内部错误', result: null });
      }
    }
    return true;
  };
}

/** `/mj/image/{id}`: the task's image through this service (MjForwardUrlEnabled), no key needed. */
async function proxyImage(
  d: MjDeps,
  id: string,
  res: ServerResponse,
  image: (url: string) => Promise<Response>,
): Promise<void> {
  if (!forwardBase(d)) throw new MjError(404, 4, '图片转发未启用');
  const t = await d.repo.byMjId(id, 0);
  if (!t?.image_url) throw new MjError(404, 4, '图片不存在');
  let up: Response;
  try {
    up = await image(t.image_url);
  } catch {
    throw new MjError(502, 4, '上游图片获取失败');
  }
  if (!up.ok || !up.body) throw new MjError(502, 4, '上游图片获取失败');
  res.writeHead(200, {
    'content-type': up.headers.get('content-type') ?? 'application/octet-stream',
    'cache-control': 'public, max-age=86400',
  });
  Readable.fromWeb(up.body as import('node:stream/web').ReadableStream).pipe(res);
}
