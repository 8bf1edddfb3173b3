import { nextSequence } from '@aigw/common';
import type { Connection, Model } from 'mongoose';
import { Schema } from 'mongoose';

/** A stored user (spec 01 section 3). Wallet fields live in the billing service. */
export interface UserDoc {
  _id: number;
  username: string;
  display_name: string;
  password_hash: string;
  group: string;
  role: number;
  status: number;
  email?: string;
  github_id?: string;
  wechat_id?: string;
  telegram_id?: string;
  access_token?: string;
  aff_code?: string;
  aff_count: number;
  aff_quota: number;
  aff_history_quota: number;
  inviter_id: number;
  deleted_at: number;
  created_at: number;
}

const userSchema = new Schema<UserDoc>(
  {
    _id: { type: Number, required: true },
    username: { type: String, required: true, unique: true },
    display_name: { type: String, default: '' },
    password_hash: { type: String, required: true },
    group: { type: String, default: 'default', index: true },
    role: { type: Number, default: 1 },
    status: { type: Number, default: 1 },
    email: { type: String, index: true, sparse: true },
    github_id: { type: String, index: true, sparse: true },
    wechat_id: { type: String, index: true, sparse: true },
    telegram_id: { type: String, index: true, sparse: true },
    access_token: { type: String, index: true, sparse: true },
    aff_code: { type: String, index: true, sparse: true },
    aff_count: { type: Number, default: 0 },
    aff_quota: { type: Number, default: 0 },
    aff_history_quota: { type: Number, default: 0 },
    inviter_id: { type: Number, default: 0 },
    deleted_at: { type: Number, default: 0 },
    created_at: { type: Number, default: () => Math.floor(Date.now() / 1000) },
  },
  { collection: 'users', versionKey: false },
);

export type UserModel = Model<UserDoc>;

/** The users collection; ids are sequential numbers as in the spec. */
export function userModel(conn: Connection): UserModel {
  return conn.model<UserDoc>('User', userSchema);
}

/** Allocates the next user id. */
export const nextUserId = (conn: Connection) => nextSequence(conn, 'users');
