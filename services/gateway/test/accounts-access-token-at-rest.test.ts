/**
 * System access tokens at rest (docs/security.md "Secrets at rest"): shown once when generated
 * (spec 01: copied to the clipboard), stored only as a SHA-256 digest and found through the
 * access_tokens index keyed by that digest (`_id`); a token stored in plain by an earlier version
 * is replaced by its digest and indexed by the users service's start-up step (indexAccessTokens).
 */
import { createHash } from 'node:crypto';
import { connectMongo } from '@aigw/common';
import type { Stack } from '@aigw/local-stack/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexAccessTokens } from '../../users/src/data/user-repository.ts';
import { Client, newUser, startAccountsStack } from './accounts-harness.ts';

let stack: Stack;
let db: Awaited<ReturnType<typeof connectMongo>>;

beforeAll(async () => {
  stack = await startAccountsStack();
  db = await connectMongo(stack.env.MONGO_URL as string, `aigw_users_${stack.id}`);
});
afterAll(async () => {
  await db?.close();
  await stack?.stop();
});

const self = (token: string, id: number) =>
  new Client(stack.gatewayUrl).get<{ username: string }>('/user/self', undefined, {
    Authorization: token,
    'New-Api-User': String(id),
  });

describe('system access tokens at rest', () => {
  it('when a token is generated, then the database holds no plain token and the token still authenticates', async () => {
    const { client, id, username } = await newUser(stack.gatewayUrl);
    const made = await client.get<string>('/user/token');
    const token = made.body.data as string;
    expect(token).toMatch(/^[A-Za-z0-9]{32}$/);
    const raw = JSON.stringify(await db.collection('users').find({}).toArray());
    expect(raw).not.toContain(token);
    const res = await self(token, id);
    expect(res.status).toBe(200);
    expect(res.body.data?.username).toBe(username);
    expect((await self(`${token.slice(0, 31)}x`, id)).status).toBe(401);
  });

  it('when a token is generated, then access_tokens holds its digest as _id and a new token retires the old entry', async () => {
    const { client, id } = await newUser(stack.gatewayUrl);
    const first = (await client.get<string>('/user/token')).body.data as string;
    const index = db.collection<{ _id: string; user_id: number }>('access_tokens');
    const mine = async () => (await index.find({ user_id: id }).toArray()).map((d) => d._id);
    expect(await mine()).toEqual([`sha256:${createHash('sha256').update(first).digest('hex')}`]);
    const second = (await client.get<string>('/user/token')).body.data as string;
    expect(await mine()).toEqual([`sha256:${createHash('sha256').update(second).digest('hex')}`]);
    expect((await self(first, id)).status).toBe(401);
    expect((await self(second, id)).status).toBe(200);
  });

  it('when a token was stored in plain by an earlier version, then the start-up step hashes and indexes it (twice is harmless)', async () => {
    const { id, username } = await newUser(stack.gatewayUrl);
    const token = `legacyPlainToken${id}`.padEnd(32, 'Q');
    await db.collection('users').updateOne({ _id: id as never }, { $set: { access_token: token } });
    expect((await self(token, id)).status).toBe(401); // not looked up in plain
    expect(await indexAccessTokens(db)).toBeGreaterThanOrEqual(1);
    expect(await indexAccessTokens(db)).toBe(0);
    expect(JSON.stringify(await db.collection('users').find({}).toArray())).not.toContain(token);
    const res = await self(token, id);
    expect(res.status).toBe(200);
    expect(res.body.data?.username).toBe(username);
  });
});
