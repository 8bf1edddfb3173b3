/**
 * Rotating TOTP_KEY_SECRET (docs/security.md): with the old secret in TOTP_KEY_SECRET_PREVIOUS the
 * users service still checks codes of factors sealed with it, seals each TOTP secret again with
 * the new one (a factor set up again meanwhile keeps its new secret), and accepts backup codes
 * made before the rotation. Real MongoDB-compatible server.
 */
import { randomBytes } from 'node:crypto';
import { connectMongo, keyCipher } from '@aigw/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { twoFactorRepository } from '../src/data/two-factor-repository.ts';
import { resealTotpSecrets, type SecretBox } from '../src/domain/two-factor.ts';

const OLD = randomBytes(32).toString('hex');
const NEW = randomBytes(32).toString('hex');
let conn: Awaited<ReturnType<typeof connectMongo>>;

beforeAll(async () => {
  conn = await connectMongo(process.env.MONGO_URL as string, `aigw_users_rot_${randomBytes(4).toString('hex')}`);
});
afterAll(async () => {
  await conn?.db?.dropDatabase();
  await conn?.close();
});

const backupDigest = (box: SecretBox, userId: number, code: string) => box.digest(`2fa-backup:${userId}:${code}`);

describe('TOTP key rotation', () => {
  it('when the secret is rotated, then every TOTP secret is sealed again with the new one, a factor set up meanwhile keeps its own, and old backup codes still count', async () => {
    const old = keyCipher(OLD, 'TOTP_KEY_SECRET');
    const store = twoFactorRepository(conn);
    await store.createPending(1, old.encrypt('JBSWY3DPEHPK3PXP'), [backupDigest(old, 1, 'AAAA-BBBB')]);
    await store.createPending(2, old.encrypt('KRSXG5CTMVRXEZLU'), []);

    const rotating = keyCipher(NEW, 'TOTP_KEY_SECRET', [OLD]);
    // User 2 sets up again after the sweep read the row: the sweep's write is refused.
    const [, two] = await store.sealedSecrets();
    await store.createPending(2, rotating.encrypt('NEWSECRETNEWSECR'), []);
    expect(await store.replaceSecret(2, two?.secret as string, rotating.encrypt('KRSXG5CTMVRXEZLU'))).toBe(false);

    expect(await resealTotpSecrets(store, rotating)).toBe(1);
    expect(await resealTotpSecrets(store, rotating)).toBe(0);
    const fresh = keyCipher(NEW, 'TOTP_KEY_SECRET');
    const secrets = Object.fromEntries((await store.sealedSecrets()).map((f) => [f.userId, fresh.decrypt(f.secret)]));
    expect(secrets).toEqual({ 1: 'JBSWY3DPEHPK3PXP', 2: 'NEWSECRETNEWSECR' });

    // A backup code made under the old secret: found by its digest under the previous secret.
    const digests = rotating.digests('2fa-backup:1:AAAA-BBBB');
    expect(digests).toHaveLength(2);
    expect(await store.spendBackupCode(1, digests[0] as string)).toBe(false);
    expect(await store.spendBackupCode(1, digests[1] as string)).toBe(true);
  });
});
