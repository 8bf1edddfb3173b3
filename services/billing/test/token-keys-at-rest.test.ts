/**
 * Token keys at rest (docs/security.md "Secrets"): the tokens collection holds no plain key, only
 * the key encrypted (AES-256-GCM) and its HMAC-SHA256; the relay's lookup by key goes through the
 * token_keys index collection keyed by that HMAC (`_id`), and owners still read their key. A row
 * stored in plain by an earlier version is migrated by the start-up and periodic sweep; an unknown
 * key never makes the lookup scan.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  connectMongo,
  createClient,
  createKafka,
  createLogger,
  createPublisher,
  keyCipher,
  runConsumer,
  topicName,
} from '@aigw/common';
import type { Stack } from '@aigw/local-stack/stack';
import { TokensService } from '@aigw/proto/billing/v1/billing';
import { EntityChangedEvent_Kind, EntityChangedEventSchema } from '@aigw/proto/events/v1/events';
import { TOPICS } from '@aigw/proto/topics';
import { eventually } from '@aigw/testkit';
import { type Api, startMoneyStack, userApi } from '@aigw/testkit/harness';
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenRepository } from '../src/data/token-repository.ts';

interface TokenJson {
  id: number;
  key: string;
  name: string;
}

let stack: Stack;
let owner: { api: Api; id: number };
let db: Awaited<ReturnType<typeof connectMongo>>;
let tokens: ReturnType<typeof createClient<typeof TokensService>>;

beforeAll(async () => {
  stack = await startMoneyStack();
  owner = await userApi(stack);
  db = await connectMongo(stack.env.MONGO_URL as string, `aigw_billing_${stack.id}`);
  tokens = createClient(TokensService, stack.env.BILLING_ADDR as string);
});
afterAll(async () => {
  tokens?.close();
  await db?.close();
  await stack?.stop();
});

/** Every string anywhere in the raw documents of a collection. */
async function rawText(collection: string): Promise<string> {
  return JSON.stringify(await db.collection(collection).find({}).toArray());
}

describe('token keys at rest', () => {
  it('when tokens are created, then no plain key is stored, the relay lookup finds them, and the owner reads the key', async () => {
    const made = await owner.api.post<TokenJson[]>('/token/', { name: 'rest', count: 3, unlimited_quota: true });
    expect(made.body).toMatchObject({ success: true });
    const list = await owner.api.get<{ items: TokenJson[] }>('/token/', { p: '1', page_size: '10' });
    const keys = (list.body.data?.items ?? []).map((t) => t.key);
    expect(keys).toHaveLength(3);
    for (const k of keys) expect(k).toMatch(/^[A-Za-z0-9]{48}$/);

    const raw = (await rawText('tokens')) + (await rawText('token_keys'));
    for (const k of keys) expect(raw).not.toContain(k);
    const docs = await db.collection('tokens').find({}).toArray();
    for (const d of docs) expect(d.key).toBeUndefined();

    for (const t of list.body.data?.items ?? []) {
      const { token } = await tokens.lookupToken({ key: `sk-${t.key}` });
      expect(token).toMatchObject({ id: t.id, userId: owner.id, key: t.key });
      const one = await owner.api.get<TokenJson>(`/token/${t.id}`);
      expect(one.body.data?.key).toBe(t.key);
    }
    await expect(tokens.lookupToken({ key: `sk-${'x'.repeat(48)}` })).rejects.toThrow('无效的令牌');
  });

  it('when the owner searches by part of a key, then the token is found', async () => {
    const list = await owner.api.get<{ items: TokenJson[] }>('/token/', { p: '1', page_size: '10' });
    const t = list.body.data?.items[0] as TokenJson;
    const found = await owner.api.get<{ items: TokenJson[] }>('/token/search', { token: t.key.slice(5, 20) });
    expect(found.body.data?.items.map((x) => x.id)).toEqual([t.id]);
  });

  it('when a token was stored in plain by an earlier version, then the sweep encrypts and indexes it and the lookup finds it; an unknown key costs one _id read, never a scan', async () => {
    const key = `legacy${'a1B2'.repeat(10)}zz`;
    const id = 900_000_000 + Math.floor(Math.random() * 1_000_000);
    await db.collection('tokens').insertOne({
      _id: id as never,
      user_id: owner.id,
      key,
      name: 'legacy',
      status: 1,
      unlimited_quota: true,
      created_time: 1,
      accessed_time: 1,
      expired_time: -1,
      allow_ips: '',
      model_limits_enabled: false,
      model_limits: '',
      group: '',
    });
    // The billing service's own repository on a connection that reports every command it sends.
    const watched = mongoose.createConnection(stack.env.MONGO_URL as string, {
      dbName: `aigw_billing_${stack.id}`,
      monitorCommands: true,
    });
    await watched.asPromise();
    try {
      const repo = tokenRepository(watched, keyCipher(stack.env.TOKEN_KEY_SECRET as string, 'TOKEN_KEY_SECRET'));
      const sent: { name: string; collection: unknown; filter: unknown }[] = [];
      watched.getClient().on('commandStarted', (e) => {
        if (['find', 'aggregate', 'count'].includes(e.commandName))
          sent.push({ name: e.commandName, collection: e.command[e.commandName], filter: e.command.filter });
      });
      expect(await repo.byKey(`nosuch${'x'.repeat(42)}`)).toBeNull();
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ name: 'find', collection: 'token_keys' });
      expect(Object.keys(sent[0]?.filter as object)).toEqual(['_id']);

      expect(await repo.sweepLegacy()).toBeGreaterThanOrEqual(1);
    } finally {
      await watched.close();
    }
    const { token } = await tokens.lookupToken({ key: `sk-${key}` });
    expect(token).toMatchObject({ id, key });
    expect(await rawText('tokens')).not.toContain(key);
    expect((await tokens.lookupToken({ key })).token?.id).toBe(id);
    const one = await owner.api.get<TokenJson>(`/token/${id}`);
    expect(one.body.data?.key).toBe(key);
  });

  it('when tokens are created, changed and deleted, then their entity-changed events carry no key (Kafka keeps them)', async () => {
    const logger = createLogger('test', 'warn');
    const kafka = createKafka((process.env.KAFKA_BROKERS as string).split(','), 'test-token-events', logger);
    const publisher = await createPublisher(kafka);
    const seen: { id: number; key: string }[] = [];
    const consumer = await runConsumer({
      kafka,
      groupId: `test.token-events.${randomUUID()}`,
      topic: topicName(TOPICS.entityChanged),
      schema: EntityChangedEventSchema,
      logger,
      publisher,
      fromBeginning: true,
      maxAttempts: 1,
      handle: async (ev) => {
        if (ev.kind === EntityChangedEvent_Kind.TOKEN) seen.push({ id: ev.id, key: ev.key });
      },
    });
    try {
      const made = await owner.api.post<TokenJson[]>('/token/', { name: 'evt', unlimited_quota: true });
      const t = (made.body.data ?? [])[0] as TokenJson;
      await owner.api.put('/token/', { id: t.id, status: 2 }, { status_only: 'true' });
      await owner.api.del(`/token/${t.id}`);
      const mine = await eventually(
        async () => seen.filter((e) => e.id === t.id),
        (v) => v.length >= 3,
        15_000,
      );
      expect(mine.length).toBeGreaterThanOrEqual(3);
      for (const e of seen) expect(e.key).toBe('');
    } finally {
      await consumer.stop();
      await publisher.disconnect();
    }
  });
  // Last in the file: it reseals every token of this stack's database under a new secret.
  it('when TOKEN_KEY_SECRET is rotated (the old one in TOKEN_KEY_SECRET_PREVIOUS), then tokens are found throughout, resealed and indexed under the new secret, and the old secret can go', async () => {
    const made = await owner.api.post<TokenJson[]>('/token/', { name: 'rot', unlimited_quota: true });
    expect(made.body).toMatchObject({ success: true });
    const list = await owner.api.get<{ items: TokenJson[] }>('/token/', { p: '1', page_size: '1', keyword: 'rot' });
    const made1 = list.body.data?.items[0] as TokenJson;
    const oldSecret = stack.env.TOKEN_KEY_SECRET as string;
    const newSecret = randomBytes(32).toString('hex');
    // The billing service as it starts after the rotation: its repository on the same database.
    const conn = await connectMongo(stack.env.MONGO_URL as string, `aigw_billing_${stack.id}`);
    try {
      const rotating = tokenRepository(conn, keyCipher(newSecret, 'TOKEN_KEY_SECRET', [oldSecret]));
      expect((await rotating.byKey(made1.key))?._id).toBe(made1.id);
      const resealed = await rotating.reseal();
      expect(resealed).toBeGreaterThanOrEqual(1);
      expect(await rotating.reseal()).toBe(0);
      const kid = keyCipher(newSecret).kid;
      const row = await db.collection('tokens').findOne({ _id: made1.id as never });
      expect(String(row?.key_enc).startsWith(`v2:${kid}:`)).toBe(true);
      // The lookup entry moved to the new digest; the old one is gone.
      const keysNow = await db.collection('token_keys').find({ token_id: made1.id }).toArray();
      expect(keysNow.map((k) => k._id)).toEqual([keyCipher(newSecret).digest(made1.key)]);
      // Rotation done: the new secret alone finds and opens the token.
      const after = await tokenRepository(conn, keyCipher(newSecret, 'TOKEN_KEY_SECRET')).byKey(made1.key);
      expect(after).toMatchObject({ _id: made1.id, key: made1.key });
      expect(await rawText('tokens')).not.toContain(made1.key);
    } finally {
      await conn.close();
    }
  });
});
