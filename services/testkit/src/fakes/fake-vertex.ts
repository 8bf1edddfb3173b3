/**
 * A fake Google Vertex AI: an OAuth token endpoint taking the jwt-bearer grant (it verifies the
 * assertion's RS256 signature with the service account's public key and its claims: issuer,
 * audience, scope, lifetime) and the prediction endpoints, which accept only access tokens it
 * issued and has not expired: Anthropic's publisher (rawPredict, streamRawPredict as SSE) and
 * Google's (generateContent, streamGenerateContent?alt=sse). Errors are Google's
 * (`{error:{code,message,status}}`; the token endpoint's `{error, error_description}`).
 *
 * @example
 * const fake = await startFakeVertex({ projectId: 'p1', region: 'us-east5' });
 * // channel type 41, key fake.serviceAccountJson, other 'us-east5', base_url fake.url
 */
import { createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, verify } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { claudeEvents, claudeMessage, replyWords } from './wire-claude.ts';

export interface FakeVertexBehaviour {
  reply: string;
  inputTokens: number;
  status: number;
  message: string;
  failTimes: number;
  /** Seconds the issued tokens live (Google: 3599). */
  tokenLifetime: number;
  toolCall?: { name: string; arguments: Record<string, unknown> };
}

export interface FakeVertex {
  url: string;
  /** The service-account JSON to put in the channel key (token_uri points at this fake). */
  serviceAccountJson: string;
  /** Token exchanges answered (successful ones). */
  readonly tokensIssued: number;
  requests: { path: string; body: Record<string, unknown>; authorization: string }[];
  set(b: Partial<FakeVertexBehaviour>): void;
  /** Revokes every issued token (the next API call with one answers 401). */
  revokeTokens(): void;
  close(): Promise<void>;
}

const DEFAULTS: FakeVertexBehaviour = {
  reply: 'Hello from Vertex',
  inputTokens: 9,
  status: 0,
  message: 'upstream failure',
  failTimes: 0,
  tokenLifetime: 3599,
};

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Google's error body: `{error: {code, message, status}}`. */
function gError(res: ServerResponse, code: number, message: string): void {
  json(res, code, { error: { code, message, status: STATUS_NAMES[code] ?? 'UNKNOWN' } });
}

/** Whom a jwt-bearer assertion must come from and be for. */
interface AssertionParty {
  verifyKey: KeyObject;
  clientEmail: string;
  audience: string;
}

/** Why an assertion is refused, or undefined when it is good. */
function checkAssertion(jwt: string, { verifyKey, clientEmail, audience }: AssertionParty): string | undefined {
  const parts = jwt.split('.');
  if (parts.length !== 3) return 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.';
  const [h = '', c = '', s = ''] = parts;
  let header: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString());
    claims = JSON.parse(Buffer.from(c, 'base64url').toString());
  } catch {
    return 'Invalid JWT: malformed.';
  }
  if (header.alg !== 'RS256') return 'Invalid JWT: unsupported algorithm.';
  if (!verify('RSA-SHA256', Buffer.from(`${h}.${c}`), verifyKey, Buffer.from(s, 'base64url')))
    return 'Invalid JWT Signature.';
  if (claims.iss !== clientEmail) return 'Invalid JWT: issuer does not match.';
  if (claims.aud !== audience) return 'Invalid JWT: audience does not match the token endpoint.';
  if (
    !String(claims.scope ?? '')
      .split(' ')
      .includes('https://www.googleapis.com/auth/cloud-platform')
  )
    return 'Invalid JWT: missing scope.';
  const now = Date.now() / 1000;
  const iat = Number(claims.iat);
  const exp = Number(claims.exp);
  if (!(iat <= now + 60 && exp > now && exp - iat <= 3600))
    return 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.';
  return undefined;
}

/** Anthropic's publisher: rawPredict, and streamRawPredict as SSE (the body carries anthropic_version). */
function anthropicPublisher(
  b: FakeVertexBehaviour,
  body: Record<string, unknown>,
  model: string,
  action: string,
  tool: FakeVertexBehaviour['toolCall'],
  res: ServerResponse,
) {
  if (!/^claude-[\w.-]+@\d{8}$/.test(model)) return gError(res, 404, `Publisher Model ${model} not found.`);
  if (body.anthropic_version !== 'vertex-2023-10-16')
    return gError(res, 400, 'anthropic_version: Input should be vertex-2023-10-16');
  if ('model' in body) return gError(res, 400, 'model: Extra inputs are not permitted');
  const o = { model, reply: b.reply, inputTokens: b.inputTokens, toolCall: tool };
  if (action === 'rawPredict') return json(res, 200, claudeMessage(o));
  if (body.stream !== true) return gError(res, 400, 'stream: streamRawPredict needs "stream": true');
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  for (const ev of claudeEvents(o)) res.write(`event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`);
  return res.end();
}

/** Google's publisher: generateContent, and streamGenerateContent (with alt=sse only). */
function googlePublisher(
  b: FakeVertexBehaviour,
  body: Record<string, unknown>,
  model: string,
  action: string,
  sse: boolean,
  res: ServerResponse,
) {
  if (!Array.isArray(body.contents)) return gError(res, 400, 'contents is required.');
  const w = replyWords(b.reply);
  const usage = {
    promptTokenCount: b.inputTokens,
    candidatesTokenCount: w.length,
    totalTokenCount: b.inputTokens + w.length,
  };
  if (action === 'generateContent')
    return json(res, 200, {
      candidates: [{ content: { role: 'model', parts: [{ text: b.reply }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: usage,
      modelVersion: model,
    });
  if (!sse) return gError(res, 400, 'this fake streams only with alt=sse');
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  w.forEach((word, i) => {
    const last = i === w.length - 1;
    res.write(
      `data: ${JSON.stringify({
        candidates: [
          { content: { role: 'model', parts: [{ text: word }] }, ...(last ? { finishReason: 'STOP' } : {}) },
        ],
        ...(last ? { usageMetadata: usage } : {}),
        modelVersion: model,
      })}\r\n\r\n`,
    );
  });
  res.end();
}

export async function startFakeVertex(opts: {
  projectId: string;
  region: string;
  behaviour?: Partial<FakeVertexBehaviour>;
}): Promise<FakeVertex> {
  let b: FakeVertexBehaviour = { ...DEFAULTS, ...opts.behaviour };
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const verifyKey = createPublicKey(publicKey.export({ type: 'spki', format: 'pem' }));
  const clientEmail = `relay@${opts.projectId}.iam.gserviceaccount.com`;
  const keyId = randomBytes(20).toString('hex');
  const tokens = new Map<string, number>();
  const requests: FakeVertex['requests'] = [];
  let issued = 0;
  let url = '';

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      if (path === '/token') {
        const form = new URLSearchParams(raw);
        if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer')
          return json(res, 400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type.' });
        const why = checkAssertion(form.get('assertion') ?? '', { verifyKey, clientEmail, audience: `${url}/token` });
        if (why) return json(res, 400, { error: 'invalid_grant', error_description: why });
        const token = `ya29.fake-${randomBytes(16).toString('hex')}`;
        tokens.set(token, Date.now() + b.tokenLifetime * 1000);
        issued++;
        return json(res, 200, { access_token: token, expires_in: b.tokenLifetime, token_type: 'Bearer' });
      }
      const authorization = String(req.headers.authorization ?? '');
      let body: Record<string, unknown> = {};
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        return gError(res, 400, 'Invalid JSON payload received.');
      }
      requests.push({ path, body, authorization });
      const token = authorization.replace(/^Bearer /, '');
      const until = tokens.get(token);
      if (until === undefined || until < Date.now())
        return gError(
          res,
          401,
          'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
        );
      const m =
        /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(anthropic|google)\/models\/([^:/]+):(rawPredict|streamRawPredict|generateContent|streamGenerateContent)(\?alt=sse)?$/.exec(
          path,
        );
      if (!m) return gError(res, 404, `The requested URL ${path} was not found on this server.`);
      const [, project, location, publisher, modelEnc, action] = m as unknown as string[];
      if (project !== opts.projectId)
        return gError(res, 403, `Permission 'aiplatform.endpoints.predict' denied on resource (or it may not exist).`);
      if (location !== opts.region) return gError(res, 404, `Publisher model not found in location ${location}.`);
      if (b.status) {
        const status = b.status;
        if (b.failTimes > 0 && --b.failTimes === 0) b.status = 0;
        return gError(res, status, b.message);
      }
      const model = decodeURIComponent(modelEnc as string);
      const tool = b.toolCall && Array.isArray(body.tools) && body.tools.length > 0 ? b.toolCall : undefined;
      if (publisher === 'anthropic') return anthropicPublisher(b, body, model, action as string, tool, res);
      return googlePublisher(b, body, model, action as string, Boolean(m[6]), res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    serviceAccountJson: JSON.stringify({
      type: 'service_account',
      project_id: opts.projectId,
      private_key_id: keyId,
      private_key: pem,
      client_email: clientEmail,
      client_id: '100000000000000000001',
      token_uri: `${url}/token`,
    }),
    get tokensIssued() {
      return issued;
    },
    requests,
    set(p) {
      b = { ...b, ...p };
    },
    revokeTokens() {
      tokens.clear();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
