/**
 * Rotating CHANNEL_KEY_SECRET (docs/security.md): with the old secret in
 * CHANNEL_KEY_SECRET_PREVIOUS the channels service reads every key and seals each one again with
 * the new secret; a key edited meanwhile keeps the edit. Real MongoDB-compatible server.
 */
import { randomBytes } from 'node:crypto';
import { connectMongo, keyCipher } from '@aigw/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channelRepository } from '../src/data/channel-repository.ts';
import { resealChannelKeys } from '../src/domain/reseal-keys.ts';

const OLD = randomBytes(32).toString('hex');
const NEW = randomBytes(32).toString('hex');
let conn: Awaited<ReturnType<typeof connectMongo>>;

beforeAll(async () => {
  conn = await connectMongo(process.env.MONGO_URL as string, `aigw_channels_rot_${randomBytes(4).toString('hex')}`);
});
afterAll(async () => {
  await conn?.db?.dropDatabase();
  await conn?.close();
});

describe('channel key rotation', () => {
  it('when the secret is rotated, then every key is read with the old secret and sealed again with the new one; an edit in between wins', async () => {
    const old = keyCipher(OLD);
    const raw = conn.collection('channels');
    await raw.insertMany([
      { _id: 1, name: 'a', key_enc: old.encrypt('sk-upstream-a') },
      { _id: 2, name: 'b', key_enc: old.encrypt('sk-upstream-b\nsk-upstream-c') },
      { _id: 3, name: 'none', key_enc: '' },
    ] as never[]);
    const rotating = keyCipher(NEW, 'CHANNEL_KEY_SECRET', [OLD]);
    const repo = channelRepository(conn);

    // An admin's edit lands after the sweep read the row: the sweep's write is refused.
    const before = (await repo.get(1))?.key_enc as string;
    await raw.updateOne({ _id: 1 } as never, { $set: { key_enc: rotating.encrypt('sk-edited') } });
    expect(await repo.replaceKeyEnc(1, before, rotating.encrypt('sk-upstream-a'))).toBe(false);

    expect(await resealChannelKeys(repo, rotating)).toBe(1);
    expect(await resealChannelKeys(repo, rotating)).toBe(0);
    const fresh = keyCipher(NEW, 'CHANNEL_KEY_SECRET');
    const keys = Object.fromEntries((await repo.all()).map((c) => [c._id, c.key_enc ? fresh.decrypt(c.key_enc) : '']));
    expect(keys).toEqual({ 1: 'sk-edited', 2: 'sk-upstream-b\nsk-upstream-c', 3: '' });
    for (const c of await repo.all()) if (c.key_enc) expect(fresh.stale(c.key_enc)).toBe(false);
  });

  it("when a channel's used quota passes 2^31, then it keeps counting (not wrapped into a negative 32-bit number)", async () => {
    const repo = channelRepository(conn);
    await conn
      .collection('channels')
      .insertOne({ _id: 9, name: 'busy', key_enc: '', used_quota: 2_000_000_000 } as never);
    await repo.addUsedQuota(9, 500_000_000);
    await repo.addUsedQuota(9, 1);
    expect((await repo.get(9))?.used_quota).toBe(2_500_000_001);
  });
});
