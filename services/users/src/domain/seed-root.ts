import { isDuplicateKey } from '@aigw/common';
import type { Connection } from 'mongoose';
import { nextUserId, type UserModel } from '../data/user-repository.ts';
import { CREDIT_REASON } from './credits.ts';
import { hashPassword } from './password.ts';
import { ROLE } from './ports.ts';

export { ROLE };

/** Root's starting quota (one-api gives root 100000000 units). */
export const ROOT_QUOTA = 100_000_000;

/**
 * On first start (no user at all) creates root with the default password, role 100, and a large
 * quota (a pending credit delivered to billing like any other). Returns the new root's id, or
 * undefined when users already exist. Safe across replicas: the unique username index turns a
 * racing second insert into a no-op.
 */
export async function seedRoot(conn: Connection, users: UserModel, password: string): Promise<number | undefined> {
  if ((await users.estimatedDocumentCount()) > 0 || (await users.exists({}))) return undefined;
  const id = await nextUserId(conn);
  try {
    await users.create({
      _id: id,
      username: 'root',
      display_name: 'Root User',
      password_hash: await hashPassword(password),
      role: ROLE.root,
      status: 1,
      group: 'default',
      aff_code: 'root',
      pending_credits: [
        { request_id: 'seed-root-quota', amount: ROOT_QUOTA, reason: CREDIT_REASON.other, content: '初始额度' },
      ],
    });
    return id;
  } catch (err) {
    if (isDuplicateKey(err)) return undefined;
    throw err;
  }
}
