import type { Connection } from 'mongoose';
import { nextUserId, type UserModel } from '../data/user-repository.ts';
import { hashPassword } from './password.ts';

export const ROLE = { common: 1, admin: 10, root: 100 } as const;

/**
 * On first start (no user at all) creates root with the default password, role 100. Returns the
 * new root's id, or undefined when users already exist. Safe across replicas: the unique username
 * index turns a racing second insert into a no-op.
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
    });
    return id;
  } catch (err) {
    if ((err as { code?: number }).code === 11000) return undefined;
    throw err;
  }
}
