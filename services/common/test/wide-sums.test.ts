/**
 * Counters and sums past 2^31 on the real MongoDB-compatible server: FerretDB keeps the `$inc` of a
 * 32-bit integer in 32 bits (it wraps), so ids and quota sums are sent as doubles (wideSum).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMongo, nextSequence } from '../src/mongo.ts';

let conn: Awaited<ReturnType<typeof connectMongo>>;

beforeAll(async () => {
  conn = await connectMongo(process.env.MONGO_URL as string, `aigw_wide_${randomBytes(4).toString('hex')}`);
});
afterAll(async () => {
  await conn?.db?.dropDatabase();
  await conn?.close();
});

describe('counters past 2^31', () => {
  it('when a counter stored as a 32-bit integer passes 2^31, then the next ids keep counting up', async () => {
    await conn.collection('counters').insertOne({ _id: 'logs', seq: 2_147_483_640 } as never);
    expect(await nextSequence(conn, 'logs', 5)).toBe(2_147_483_645);
    expect(await nextSequence(conn, 'logs', 5)).toBe(2_147_483_650);
    expect(await nextSequence(conn, 'logs')).toBe(2_147_483_651);
  });
});
