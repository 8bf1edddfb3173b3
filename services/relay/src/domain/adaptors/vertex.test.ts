import { createPublicKey, verify } from 'node:crypto';
import { type FakeVertex, startFakeVertex } from '@aigw/testkit/fakes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUpstreamHttp } from '../../data/upstream-http.ts';
import { vertexClaudeModel, vertexRegion, vertexUrl } from './vertex.ts';
import { createGoogleTokenCache, parseServiceAccount, serviceAccountJwt } from './vertex-auth.ts';

const http = createUpstreamHttp({ timeoutMs: 10_000 });
let fake: FakeVertex;
beforeAll(async () => {
  fake = await startFakeVertex({ projectId: 'proj-1', region: 'us-east5' });
});
afterAll(async () => {
  await fake.close();
  await http.close();
});

describe('Vertex AI credentials', () => {
  it('exchanges a signed JWT for a token once and reuses it until near expiry', async () => {
    // Tokens living 5 min + 300 ms: the cache (refreshing 5 min early) keeps one for 300 ms.
    fake.set({ tokenLifetime: 300.3 });
    const cache = createGoogleTokenCache(http);
    const sa = parseServiceAccount(fake.serviceAccountJson);
    const before = fake.tokensIssued;
    const [a, b] = await Promise.all([cache.token(sa), cache.token(sa)]);
    expect(a).toBe(b);
    expect(await cache.token(sa)).toBe(a);
    expect(fake.tokensIssued).toBe(before + 1);
    await new Promise((r) => setTimeout(r, 400));
    fake.set({ tokenLifetime: 3599 });
    const c = await cache.token(sa);
    expect(c).not.toBe(a);
    expect(fake.tokensIssued).toBe(before + 2);
  });

  it('the assertion carries the header and claims Google expects, RS256-signed with the account key', async () => {
    const sa = parseServiceAccount(fake.serviceAccountJson);
    const jwt = await serviceAccountJwt(sa, 1_700_000_000);
    const [h = '', c = '', s = ''] = jwt.split('.');
    const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString());
    expect(decode(h)).toEqual({ alg: 'RS256', typ: 'JWT', kid: sa.privateKeyId });
    expect(decode(c)).toEqual({
      iss: sa.clientEmail,
      scope: 'https://www.googleapis.com/auth/cloud-platform',
      aud: sa.tokenUri,
      iat: 1_700_000_000,
      exp: 1_700_003_600,
    });
    // Checked with node:crypto, not jose, so the test does not trust the signer to verify itself.
    const publicKey = createPublicKey(sa.privateKey);
    expect(verify('RSA-SHA256', Buffer.from(`${h}.${c}`), publicKey, Buffer.from(s, 'base64url'))).toBe(true);
    const noKid = await serviceAccountJwt({ ...sa, privateKeyId: '' }, 1_700_000_000);
    expect(decode(noKid.split('.')[0] ?? '')).toEqual({ alg: 'RS256', typ: 'JWT' });
  });

  it('a JWT signed with another key is refused by the token endpoint', async () => {
    const other = await startFakeVertex({ projectId: 'proj-1', region: 'us-east5' });
    try {
      const mine = parseServiceAccount(fake.serviceAccountJson);
      const theirs = parseServiceAccount(other.serviceAccountJson);
      // Our email and token URI, their private key.
      const forged = { ...mine, privateKey: theirs.privateKey };
      const cache = createGoogleTokenCache(http);
      await expect(cache.token(forged)).rejects.toThrow('Invalid JWT Signature.');
      const jwt = await serviceAccountJwt(mine, Math.floor(Date.now() / 1000) - 7200);
      const res = await fetch(`${fake.url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: jwt }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
    } finally {
      await other.close();
    }
  });

  it('a key that is not a service account names what is missing', () => {
    expect(() => parseServiceAccount('not json')).toThrow('服务账号 JSON');
    expect(() => parseServiceAccount('{"client_email":"a@b"}')).toThrow('private_key');
  });

  it('the token reaches Claude and Gemini endpoints; other tokens get 401', async () => {
    const cache = createGoogleTokenCache(http);
    const sa = parseServiceAccount(fake.serviceAccountJson);
    const token = await cache.token(sa);
    const claude = await fetch(vertexUrl(fake.url, 'us-east5', sa.projectId, 'claude-3-5-sonnet-20241022', false), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ anthropic_version: 'vertex-2023-10-16', max_tokens: 10, messages: [] }),
    });
    expect(claude.status).toBe(200);
    expect(fake.requests.at(-1)?.path).toBe(
      '/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/claude-3-5-sonnet-v2%4020241022:rawPredict',
    );
    const gemini = await fetch(vertexUrl(fake.url, 'us-east5', sa.projectId, 'gemini-2.5-pro', false), {
      method: 'POST',
      headers: { authorization: 'Bearer ya29.someone-else', 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [] }),
    });
    expect(gemini.status).toBe(401);
    expect(((await gemini.json()) as { error: { status: string } }).error.status).toBe('UNAUTHENTICATED');
  });

  it('regions from a name or a JSON map; Claude model names with @', () => {
    expect(vertexRegion('', 'x')).toBe('us-central1');
    expect(vertexRegion('europe-west1', 'x')).toBe('europe-west1');
    const map = '{"default":"us-central1","claude-3-7-sonnet-20250219":"us-east5"}';
    expect(vertexRegion(map, 'claude-3-7-sonnet-20250219')).toBe('us-east5');
    expect(vertexRegion(map, 'gemini-2.5-pro')).toBe('us-central1');
    expect(vertexClaudeModel('claude-3-7-sonnet-20250219')).toBe('claude-3-7-sonnet@20250219');
    expect(vertexUrl('', 'global', 'p', 'gemini-2.5-pro', true)).toBe(
      'https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
    );
  });
});
