/**
 * A fake Tencent Hunyuan endpoint (ChatCompletions, API 2023-09-01) that checks each request's
 * TC3-HMAC-SHA256 signature the way Tencent Cloud does (its own implementation): known SecretId,
 * action and version headers, a timestamp within five minutes whose date is the credential's, and
 * the signature over the canonical request rebuilt from the headers and body received. Errors are
 * Tencent's: HTTP 200 with `Response.Error {Code, Message}`. Streams are SSE `data:` lines whose
 * `Choices[].Delta` carry the text and whose `Usage` grows to the total; no closing marker.
 *
 * @example
 * const fake = await startFakeHunyuan({ credentials: { AKIDfake: 'secret' } });
 * // channel type 23, key `1250000000|AKIDfake|secret`, base_url fake.url
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeHunyuan {
  url: string;
  requests: { headers: Record<string, unknown>; body: Record<string, unknown>; signatureError?: string }[];
  set(b: Partial<HunyuanBehaviour>): void;
  close(): Promise<void>;
}

interface HunyuanBehaviour {
  reply: string;
  promptTokens: number;
  /** A Tencent error code to answer with (e.g. LimitExceeded). */
  errorCode: string;
  errorMessage: string;
}

const sha256 = (d: string) => createHash('sha256').update(d).digest('hex');
const hmac = (k: Buffer | string, d: string) => createHmac('sha256', k).update(d).digest();

export async function startFakeHunyuan(opts: {
  credentials: Record<string, string>;
  behaviour?: Partial<HunyuanBehaviour>;
}): Promise<FakeHunyuan> {
  let b: HunyuanBehaviour = {
    reply: '你好 from hunyuan',
    promptTokens: 8,
    errorCode: '',
    errorMessage: '',
    ...opts.behaviour,
  };
  const requests: FakeHunyuan['requests'] = [];

  const send = (res: ServerResponse, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const fail = (res: ServerResponse, code: string, message: string) =>
    send(res, { Response: { Error: { Code: code, Message: message }, RequestId: randomUUID() } });

  function verify(headers: Record<string, string | string[] | undefined>, raw: string): [string, string] | undefined {
    const auth = String(headers.authorization ?? '');
    const m =
      /^TC3-HMAC-SHA256 Credential=([^/]+)\/(\d{4}-\d{2}-\d{2})\/([^/]+)\/tc3_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
        auth,
      );
    if (!m) return ['AuthFailure.InvalidAuthorization', 'Authorization header is invalid.'];
    const [, secretId = '', date = '', service = '', signed = '', signature = ''] = m;
    const secret = opts.credentials[secretId];
    if (secret === undefined)
      return [
        'AuthFailure.SecretIdNotFound',
        'The SecretId is not found, please ensure that your SecretId is correct.',
      ];
    if (service !== 'hunyuan') return ['AuthFailure.InvalidAuthorization', 'Credential service does not match.'];
    const ts = Number(headers['x-tc-timestamp']);
    if (!Number.isInteger(ts) || Math.abs(Date.now() / 1000 - ts) > 300)
      return ['AuthFailure.SignatureExpire', 'Signature expired. Timestamp is too far from the server time.'];
    if (new Date(ts * 1000).toISOString().slice(0, 10) !== date)
      return ['AuthFailure.InvalidAuthorization', 'Credential date does not match the timestamp.'];
    const names = signed.split(';');
    const lines = names
      .map(
        (n) =>
          `${n}:${String(headers[n] ?? '')
            .trim()
            .toLowerCase()}\n`,
      )
      .join('');
    const canonical = `POST\n/\n\n${lines}\n${signed}\n${sha256(raw)}`;
    const toSign = `TC3-HMAC-SHA256\n${ts}\n${date}/hunyuan/tc3_request\n${sha256(canonical)}`;
    let k = hmac(`TC3${secret}`, date);
    k = hmac(k, 'hunyuan');
    k = hmac(k, 'tc3_request');
    if (createHmac('sha256', k).update(toSign).digest('hex') !== signature)
      return [
        'AuthFailure.SignatureFailure',
        'The provided credentials could not be validated. Please check your signature is correct.',
      ];
    return undefined;
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const rec: FakeHunyuan['requests'][number] = { headers: req.headers, body: {} };
      requests.push(rec);
      const bad = verify(req.headers, raw);
      if (bad) {
        rec.signatureError = bad[0];
        return fail(res, bad[0], bad[1]);
      }
      if (req.headers['x-tc-action'] !== 'ChatCompletions' || req.headers['x-tc-version'] !== '2023-09-01')
        return fail(res, 'InvalidAction', 'The requested action does not exist.');
      try {
        rec.body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return fail(res, 'InvalidParameter', 'Invalid JSON body.');
      }
      const body = rec.body;
      if (typeof body.Model !== 'string' || !Array.isArray(body.Messages))
        return fail(res, 'MissingParameter', 'The request is missing a required parameter `Model` or `Messages`.');
      if (b.errorCode) return fail(res, b.errorCode, b.errorMessage);
      const words = b.reply.split(' ').map((w, i, all) => (i < all.length - 1 ? `${w} ` : w));
      const id = randomUUID();
      const created = Math.floor(Date.now() / 1000);
      const usage = (n: number) => ({
        PromptTokens: b.promptTokens,
        CompletionTokens: n,
        TotalTokens: b.promptTokens + n,
      });
      if (body.Stream !== true)
        return send(res, {
          Response: {
            RequestId: id,
            Note: '以上内容为AI生成，不代表开发者立场，请勿删除或修改本标记',
            Choices: [{ FinishReason: 'stop', Message: { Role: 'assistant', Content: b.reply } }],
            Created: created,
            Id: id,
            Usage: usage(words.length),
          },
        });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      words.forEach((w, i) => {
        const last = i === words.length - 1;
        res.write(
          `data: ${JSON.stringify({
            Note: '以上内容为AI生成，不代表开发者立场，请勿删除或修改本标记',
            Choices: [{ Delta: { Role: 'assistant', Content: w }, FinishReason: last ? 'stop' : '' }],
            Created: created,
            Id: id,
            Usage: usage(i + 1),
          })}\n\n`,
        );
      });
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    set(p) {
      b = { ...b, ...p };
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
