import { type Stack, startStack } from '@aigw/local-stack/stack';
import { type FakeProvider, startFakeProvider } from '@aigw/testkit/fakes';
import { clientsFor, createChannel, modelName, type RelayStack, routable, userWithToken } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rootClient } from './accounts-harness.ts';
import { type RawAnswer, type RawRequest, raw } from './hardening-raw.ts';

/**
 * Issue 10 item 1: no request can stop a process. A corpus of malformed requests (bad percent
 * encoding in paths, queries and cookies, invalid JSON, wrong content types, huge headers,
 * non-UTF-8 bodies, objects where scalars belong, arrays as bodies) goes to the relay, the gateway
 * and the tasks service of one in-process stack. Every answer must be a 4xx in the route's error
 * shape; afterwards every process still serves. The services run inside this test process: a
 * throw outside a handler would end the worker and fail the file.
 */

type Shape = 'openai' | 'claude' | 'gemini' | 'envelope' | 'json-error' | 'mj' | 'bare';
interface Case {
  name: string;
  to: 'relay' | 'gateway' | 'tasks';
  req: RawRequest;
  shape: Shape;
  /** Exact status when it matters (default: any 4xx). */
  status?: number;
  /** Reaches the upstream (a fake provider) when the relay lets it through: any status below 500. */
  lenient?: true;
}

const json = { 'content-type': 'application/json' };
const nonUtf8 = Buffer.from([0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]);
const huge = 'x'.repeat(20_000);

function corpus(key: string, model: string): Case[] {
  const auth = { authorization: `Bearer ${key}` };
  const relayCases: Case[] = [
    {
      name: 'bad escape in model path',
      to: 'relay',
      req: { path: '/v1/models/%E0%A4%A', headers: auth },
      shape: 'openai',
    },
    { name: 'bad escape without a key', to: 'relay', req: { path: '/v1/models/%E0%A4%A' }, shape: 'openai' },
    {
      // Chat bodies are limited to RELAY_MAX_JSON_BYTES (10 MB by default); uploads may be larger.
      name: 'an 11 MB chat body',
      to: 'relay',
      req: {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...json, ...auth },
        body: JSON.stringify({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'x'.repeat(11 * 1024 * 1024) }],
        }),
      },
      shape: 'openai',
      status: 413,
    },
    {
      name: 'bad escape in gemini model',
      to: 'relay',
      req: {
        method: 'POST',
        path: '/v1beta/models/%ZZ:generateContent',
        headers: { ...json, 'x-goog-api-key': key },
        body: '{}',
      },
      shape: 'gemini',
    },
    {
      name: 'bad escape in gemini stream model',
      to: 'relay',
      req: { method: 'POST', path: '/v1beta/models/%E0%A4%A:streamGenerateContent?key=%ZZ', headers: json, body: '{}' },
      shape: 'gemini',
    },
    {
      name: 'bad escape in query',
      to: 'relay',
      req: { path: '/v1/models?x=%E0%A4%A&key=%ZZ', headers: auth },
      shape: 'openai',
      status: 200,
    },
    {
      name: 'invalid JSON chat',
      to: 'relay',
      req: { method: 'POST', path: '/v1/chat/completions', headers: { ...json, ...auth }, body: '{"model":' },
      shape: 'openai',
      status: 400,
    },
    {
      name: 'array body chat',
      to: 'relay',
      req: { method: 'POST', path: '/v1/chat/completions', headers: { ...json, ...auth }, body: '[1,2,3]' },
      shape: 'openai',
      status: 400,
    },
    {
      name: 'string body chat',
      to: 'relay',
      req: { method: 'POST', path: '/v1/chat/completions', headers: { ...json, ...auth }, body: '"hello"' },
      shape: 'openai',
      status: 400,
    },
    {
      name: 'non-UTF-8 chat body',
      to: 'relay',
      req: { method: 'POST', path: '/v1/chat/completions', headers: { ...json, ...auth }, body: nonUtf8 },
      shape: 'openai',
      status: 400,
    },
    {
      name: 'object as model',
      to: 'relay',
      req: {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...json, ...auth },
        body: JSON.stringify({ model: { $gt: '' }, messages: [{ role: 'user', content: 'hi' }] }),
      },
      shape: 'openai',
      status: 400,
    },
    {
      // The reservation was Infinity and billing failed it: 500 预扣费失败 before the count check.
      name: 'max_tokens 1e308',
      to: 'relay',
      req: {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...json, ...auth },
        body: JSON.stringify({ model, max_tokens: 1e308, messages: [{ role: 'user', content: 'hi' }] }),
      },
      shape: 'openai',
      status: 400,
    },
    {
      name: 'fractional max_tokens on messages',
      to: 'relay',
      req: {
        method: 'POST',
        path: '/v1/messages',
        headers: { ...json, 'x-api-key': key },
        body: JSON.stringify({ model, max_tokens: 0.5, messages: [{ role: 'user', content: 'hi' }] }),
      },
      shape: 'claude',
      status: 400,
    },
    {
      name: 'negative maxOutputTokens on gemini',
      to: 'relay',
      req: {
        method: 'POST',
        path: `/v1beta/models/${model}:generateContent`,
        headers: { ...json, 'x-goog-api-key': key },
        body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: -5 } }),
      },
      shape: 'gemini',
      status: 400,
    },
    {
      name: 'object as messages',
      to: 'relay',
      req: {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...json, ...auth },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: { $gt: 1 } }),
      },
      shape: 'openai',
    },
    {
      name: 'number as a message',
      to: 'relay',
      req: {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...json, ...auth },
        body: `{"model":"${model}","messages":[1]}`,
      },
      shape: 'openai',
      lenient: true,
    },
    {
      name: 'objects as role and content',
      to: 'relay',
      req: {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...json, ...auth },
        body: `{"model":"${model}","messages":[{"role":{},"content":{"$gt":1}}]}`,
      },
      shape: 'openai',
      lenient: true,
    },
    {
      name: 'object as a content part text',
      to: 'relay',
      req: {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...json, ...auth },
        body: `{"model":"${model}","messages":[{"role":"user","content":[{"type":"text","text":{}}]}]}`,
      },
      shape: 'openai',
      lenient: true,
    },
    {
      name: 'negative max_tokens',
      to: 'relay',
      req: {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...json, ...auth },
        body: `{"model":"${model}","max_tokens":-5,"messages":[{"role":"user","content":"hi"}]}`,
      },
      shape: 'openai',
      lenient: true,
    },
    {
      name: 'huge n',
      to: 'relay',
      req: {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...json, ...auth },
        body: `{"model":"${model}","n":1e300,"messages":[{"role":"user","content":"hi"}]}`,
      },
      shape: 'openai',
      lenient: true,
    },
    {
      name: 'string as stream_options',
      to: 'relay',
      req: {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...json, ...auth },
        body: `{"model":"${model}","stream":true,"stream_options":"yes","messages":[{"role":"user","content":"hi"}]}`,
      },
      shape: 'openai',
      lenient: true,
    },
    {
      name: 'broken multipart',
      to: 'relay',
      req: {
        method: 'POST',
        path: '/v1/audio/transcriptions',
        headers: { ...auth, 'content-type': 'multipart/form-data; boundary=zzz' },
        body: '--zzz\r\nnot a part',
      },
      shape: 'openai',
      status: 400,
    },
    {
      name: 'invalid JSON claude',
      to: 'relay',
      req: { method: 'POST', path: '/v1/messages', headers: { ...json, 'x-api-key': key }, body: '{{{' },
      shape: 'claude',
      status: 400,
    },
    {
      name: 'playground with a malformed cookie',
      to: 'relay',
      req: {
        method: 'POST',
        path: '/pg/chat/completions',
        headers: { ...json, cookie: 'session=%E0%A4%A.x', 'new-api-user': '1' },
        body: '{}',
      },
      shape: 'openai',
      status: 401,
    },
    {
      name: 'huge header',
      to: 'relay',
      req: { path: '/v1/models', headers: { ...auth, 'x-big': huge } },
      shape: 'bare',
      status: 431,
    },
    { name: 'unknown gemini path', to: 'relay', req: { path: '/v1beta/nope' }, shape: 'gemini', status: 404 },
  ];
  const gatewayCases: Case[] = [
    // The relay's routes through the gateway's proxy keep the relay's shapes.
    ...relayCases
      .filter((c) => c.shape !== 'bare')
      .map((c) => ({ ...c, name: `via gateway: ${c.name}`, to: 'gateway' as const })),
    {
      name: 'login with invalid JSON',
      to: 'gateway',
      req: { method: 'POST', path: '/api/user/login', headers: json, body: '{"username":"root",' },
      shape: 'envelope',
      status: 400,
    },
    {
      name: 'login with an array body',
      to: 'gateway',
      req: { method: 'POST', path: '/api/user/login', headers: json, body: '["root","123456"]' },
      shape: 'envelope',
      status: 400,
    },
    {
      name: 'login with an object as username',
      to: 'gateway',
      req: { method: 'POST', path: '/api/user/login', headers: json, body: '{"username":{"$gt":""},"password":"x"}' },
      shape: 'envelope',
      status: 400,
    },
    {
      name: 'login with an unknown charset',
      to: 'gateway',
      req: {
        method: 'POST',
        path: '/api/user/login',
        headers: { 'content-type': 'application/json; charset=klingon' },
        body: '{}',
      },
      shape: 'envelope',
      status: 415,
    },
    {
      name: 'login with a broken gzip body',
      to: 'gateway',
      req: {
        method: 'POST',
        path: '/api/user/login',
        headers: { ...json, 'content-encoding': 'gzip' },
        body: 'not gzip',
      },
      shape: 'envelope',
      status: 400,
    },
    {
      name: 'login with a non-UTF-8 body',
      to: 'gateway',
      req: { method: 'POST', path: '/api/user/login', headers: json, body: nonUtf8 },
      shape: 'envelope',
    },
    {
      name: 'login as text/plain',
      to: 'gateway',
      req: { method: 'POST', path: '/api/user/login', headers: { 'content-type': 'text/plain' }, body: 'root:123456' },
      shape: 'envelope',
    },
    { name: 'bad escape in an /api path', to: 'gateway', req: { path: '/api/user/%E0%A4%A' }, shape: 'envelope' },
    {
      name: 'bad escape in an /api query',
      to: 'gateway',
      req: { path: '/api/status?x=%E0%A4%A' },
      shape: 'envelope',
      status: 200,
    },
    {
      name: 'malformed session cookie',
      to: 'gateway',
      req: { path: '/api/user/self', headers: { cookie: 'session=%E0%A4%A' } },
      shape: 'envelope',
      status: 401,
    },
    {
      name: 'huge header',
      to: 'gateway',
      req: { path: '/api/status', headers: { 'x-big': huge } },
      shape: 'bare',
      status: 431,
    },
    { name: 'bad escape in a console path', to: 'gateway', req: { path: '/%E0%A4%A' }, shape: 'bare' },
    { name: 'bad escape in a tasks path', to: 'gateway', req: { path: '/mj/%E0%A4%A' }, shape: 'mj' },
  ];
  const tasksCases: Case[] = [
    { name: 'bad escape in a path', to: 'tasks', req: { path: '/mj/task/%E0%A4%A/fetch' }, shape: 'mj' },
    {
      name: 'invalid JSON submit',
      to: 'tasks',
      req: { method: 'POST', path: '/mj/submit/imagine', headers: json, body: '{"prompt":' },
      shape: 'mj',
    },
    { name: 'bad escape outside the task routes', to: 'tasks', req: { path: '/x/%E0%A4%A' }, shape: 'json-error' },
    {
      name: 'huge header',
      to: 'tasks',
      req: { path: '/suno/fetch', headers: { 'x-big': huge } },
      shape: 'bare',
      status: 431,
    },
  ];
  return [...relayCases, ...gatewayCases, ...tasksCases];
}

function checkShape(shape: Shape, a: RawAnswer): void {
  if (shape === 'bare') return;
  const body = a.json() as Record<string, unknown>;
  const err = body.error as Record<string, unknown> | undefined;
  if (shape === 'envelope') {
    expect(body.success).toBe(false);
    expect(typeof body.message).toBe('string');
    expect(String(body.message).length).toBeGreaterThan(0);
  } else if (shape === 'openai') {
    expect(typeof err?.message).toBe('string');
    expect(typeof err?.type).toBe('string');
  } else if (shape === 'claude') {
    expect(body.type).toBe('error');
    expect(typeof err?.type).toBe('string');
  } else if (shape === 'mj') {
    // midjourney-proxy's answer: {code, description, result}.
    expect(typeof body.code).toBe('number');
    expect(typeof body.description).toBe('string');
  } else if (shape === 'gemini') {
    expect(typeof err?.code).toBe('number');
    expect(typeof err?.status).toBe('string');
  } else {
    expect(typeof err?.message).toBe('string');
  }
}

describe('malformed requests against every HTTP entry point', () => {
  let stack: Stack;
  let s: RelayStack;
  let key: string;
  let model: string;
  let fake: FakeProvider;
  const bases = () => ({
    relay: stack.relayUrl,
    gateway: stack.gatewayUrl,
    tasks: `http://127.0.0.1:${stack.ports.tasks.http}`,
  });

  beforeAll(async () => {
    stack = await startStack({
      env: { RATE_LIMIT_API: '1000000', RATE_LIMIT_CRITICAL: '100000', RATE_LIMIT_WEB: '100000' },
    });
    s = clientsFor(stack);
    key = (await userWithToken(s)).key;
    // A channel to a fake provider, so that bodies the relay lets through meet the whole pipeline.
    fake = await startFakeProvider({ kind: 'openai', key: 'up-openai', reply: 'ok', promptTokens: 3 });
    model = modelName('gpt-4o-mini');
    await createChannel(s, { type: 1, baseUrl: fake.url, key: 'up-openai', models: model });
    await routable(stack.relayUrl, key, model);
  });
  afterAll(async () => {
    await s?.stop();
    await fake?.close();
  });

  it('when each malformed request is sent, then the answer is a 4xx in the route shape', async () => {
    const failures: string[] = [];
    for (const c of corpus(key, model)) {
      const a = await raw(bases()[c.to], c.req);
      const statusOk = c.lenient
        ? a.status >= 200 && a.status < 500
        : c.status !== undefined
          ? a.status === c.status
          : a.status >= 400 && a.status < 500;
      let shapeOk = true;
      if (statusOk && a.status >= 400) {
        try {
          checkShape(c.shape, a);
        } catch {
          shapeOk = false;
        }
      }
      if (!statusOk || !shapeOk) failures.push(`${c.to} ${c.name}: ${a.status} ${a.text.slice(0, 160)}`);
    }
    expect(failures).toEqual([]);
  });

  it('when the corpus has run, then every process is alive and serving', async () => {
    const b = bases();
    expect((await raw(b.relay, { path: '/healthz' })).status).toBe(200);
    expect((await raw(b.tasks, { path: '/healthz' })).status).toBe(200);
    const models = await raw(b.relay, { path: '/v1/models', headers: { authorization: `Bearer ${key}` } });
    expect(models.status).toBe(200);
    const root = await rootClient(stack.gatewayUrl);
    expect((await root.get('/user/self')).body.success).toBe(true);
    expect((await raw(b.gateway, { path: '/v1/models', headers: { authorization: `Bearer ${key}` } })).status).toBe(
      200,
    );
  });

  it('when /readyz and /metrics are asked on a public port, then they are not there; the ops ports serve them', async () => {
    const b = bases();
    for (const [svc, base] of Object.entries(b)) {
      for (const path of ['/readyz', '/metrics']) {
        const pub = await raw(base, { path });
        expect(pub.status, `${svc} ${path}`).toBe(404);
        expect(pub.text).not.toMatch(/process_cpu|"checks"/);
      }
      const port = stack.ports[svc as 'relay' | 'gateway' | 'tasks'].metrics;
      expect((await raw(`http://127.0.0.1:${port}`, { path: '/readyz' })).status, svc).toBe(200);
      expect((await raw(`http://127.0.0.1:${port}`, { path: '/metrics' })).text, svc).toContain('process_cpu');
    }
  });
});
