import { escapeRegex, isDuplicateKey, nextSequence, wideSum } from '@aigw/common';
import { conflict } from '@aigw/common/errors';
import type { Connection, Model } from 'mongoose';
import { Schema } from 'mongoose';
import { ACCESS_TOKEN_DIGEST_PREFIX, accessTokenDigest } from '../domain/access-token.ts';
import type { IdentityField, PendingCredit, UserRecord, UserStore } from '../domain/ports.ts';

/** A stored user (spec 01 section 3). Wallet fields live in the billing service. */
export interface UserDoc extends Omit<UserRecord, 'id'> {
  _id: number;
  last_checkin_date?: string;
}

const creditSchema = new Schema<PendingCredit>(
  { request_id: String, amount: Number, reason: Number, content: String },
  { _id: false },
);

const userSchema = new Schema<UserDoc>(
  {
    _id: { type: Number, required: true },
    username: { type: String, required: true, unique: true },
    display_name: { type: String, default: '' },
    password_hash: { type: String, default: '' },
    group: { type: String, default: 'default', index: true },
    role: { type: Number, default: 1 },
    status: { type: Number, default: 1 },
    email: { type: String, default: '', index: true },
    github_id: { type: String, default: '', index: true },
    wechat_id: { type: String, default: '', index: true },
    telegram_id: { type: String, default: '', index: true },
    oidc_id: { type: String, default: '' },
    linux_do_id: { type: String, default: '' },
    discord_id: { type: String, default: '' },
    custom_oauth_ids: { type: Schema.Types.Mixed, default: () => ({}) },
    access_token: { type: String, default: '', index: true },
    aff_code: { type: String, default: '', index: true },
    aff_count: { type: Number, default: 0 },
    aff_quota: { type: Number, default: 0 },
    aff_history_quota: { type: Number, default: 0 },
    inviter_id: { type: Number, default: 0 },
    deleted_at: { type: Number, default: 0 },
    created_at: { type: Number, default: () => Math.floor(Date.now() / 1000) },
    last_login_at: { type: Number, default: 0 },
    pending_credits: { type: [creditSchema], default: [] },
    remark: { type: String, default: '' },
    setting: { type: String, default: '' },
    /** The last calendar day checked in (claimed atomically: once per day). */
    last_checkin_date: { type: String, default: '' },
  },
  { collection: 'users', versionKey: false },
);

export type UserModel = Model<UserDoc>;

/** The users collection; ids are sequential numbers as in the spec. */
export function userModel(conn: Connection): UserModel {
  return conn.models.User ? (conn.models.User as UserModel) : conn.model<UserDoc>('User', userSchema);
}

/** Allocates the next user id. */
export const nextUserId = (conn: Connection) => nextSequence(conn, 'users');

function toRecord(doc: UserDoc): UserRecord {
  const { _id, ...rest } = doc;
  return {
    id: _id,
    username: rest.username,
    display_name: rest.display_name ?? '',
    password_hash: rest.password_hash ?? '',
    group: rest.group || 'default',
    role: rest.role ?? 1,
    status: rest.status ?? 1,
    email: rest.email ?? '',
    github_id: rest.github_id ?? '',
    wechat_id: rest.wechat_id ?? '',
    telegram_id: rest.telegram_id ?? '',
    oidc_id: rest.oidc_id ?? '',
    linux_do_id: rest.linux_do_id ?? '',
    discord_id: rest.discord_id ?? '',
    custom_oauth_ids: { ...(rest.custom_oauth_ids ?? {}) },
    access_token: rest.access_token ?? '',
    aff_code: rest.aff_code ?? '',
    aff_count: rest.aff_count ?? 0,
    aff_quota: rest.aff_quota ?? 0,
    aff_history_quota: rest.aff_history_quota ?? 0,
    inviter_id: rest.inviter_id ?? 0,
    deleted_at: rest.deleted_at ?? 0,
    created_at: rest.created_at ?? 0,
    last_login_at: rest.last_login_at ?? 0,
    remark: rest.remark ?? '',
    setting: rest.setting ?? '',
    pending_credits: (rest.pending_credits ?? []).map((c) => ({
      request_id: c.request_id,
      amount: c.amount,
      reason: c.reason,
      content: c.content,
    })),
  };
}

/**
 * The access-token index: one row per stored token digest (`_id`), so the gateway's lookup of an
 * `Authorization` token is two `_id` reads (FerretDB indexes only `_id`; see docs/adr/0001).
 */
interface AccessTokenDoc {
  _id: string;
  user_id: number;
}
const accessTokens = (conn: Connection) => conn.collection<AccessTokenDoc>('access_tokens');

/**
 * At start: replaces access tokens stored in plain (before hashing) by their digest and indexes
 * every digest (idempotent).
 */
export async function indexAccessTokens(conn: Connection): Promise<number> {
  const model = userModel(conn);
  const index = accessTokens(conn);
  let converted = 0;
  const docs = await model
    .find({ access_token: { $nin: ['', null] } }, { _id: 1, access_token: 1 })
    .lean<Pick<UserDoc, '_id' | 'access_token'>[]>();
  for (const doc of docs) {
    let digest = doc.access_token;
    if (!digest.startsWith(ACCESS_TOKEN_DIGEST_PREFIX)) {
      digest = accessTokenDigest(doc.access_token);
      await model.updateOne({ _id: doc._id, access_token: doc.access_token }, { $set: { access_token: digest } });
      converted++;
    }
    await index.updateOne({ _id: digest }, { $set: { user_id: doc._id } }, { upsert: true });
  }
  return converted;
}

/** Users not deleted (deleted ones stay, for their names and logs). */
const live = { deleted_at: 0 };

/** The one user a filter matches, as a record. */
async function findOne(model: UserModel, filter: object): Promise<UserRecord | undefined> {
  const doc = await model.findOne(filter).lean<UserDoc>();
  return doc ? toRecord(doc) : undefined;
}

/** A page of users, newest first, with the total the filter matches. */
async function findPage(model: UserModel, filter: object, p: { page: number; pageSize: number }) {
  const [docs, total] = await Promise.all([
    model
      .find(filter)
      .sort({ _id: -1 })
      .skip((p.page - 1) * p.pageSize)
      .limit(p.pageSize)
      .lean<UserDoc[]>(),
    model.countDocuments(filter),
  ]);
  return { items: docs.map(toRecord), total };
}

type UserReads = Pick<
  UserStore,
  'findById' | 'findManyByIds' | 'findByLogin' | 'findBy' | 'usernameTaken' | 'list' | 'search'
>;

/** Finding users: by id, login, identity field (the access token through its index), pages and searches. */
function userReads(conn: Connection): UserReads {
  const model = userModel(conn);
  const tokenIndex = accessTokens(conn);
  const one = (filter: object) => findOne(model, filter);
  const page = (filter: object, p: { page: number; pageSize: number }) => findPage(model, filter, p);

  return {
    findById: (id, includeDeleted = false) => one(includeDeleted ? { _id: id } : { _id: id, ...live }),
    async findManyByIds(ids) {
      const docs = await model.find({ _id: { $in: ids } }).lean<UserDoc[]>();
      return docs.map(toRecord);
    },
    async findByLogin(name) {
      return (
        (await one({ username: name, ...live })) ??
        (name.includes('@') ? one({ email: name.toLowerCase(), ...live }) : undefined)
      );
    },
    async findBy(field: IdentityField, value: string) {
      if (!value) return undefined;
      if (field === 'access_token') {
        // Only digests are stored: through the index, and still the user's current token.
        const entry = await tokenIndex.findOne({ _id: value });
        return entry ? one({ _id: entry.user_id, access_token: value, ...live }) : undefined;
      }
      return one({ [field]: value, ...live });
    },
    usernameTaken: async (username) => (await model.exists({ username })) !== null,
    list: (p) => page({}, p),
    search(keyword, group, p) {
      const filter: Record<string, unknown> = {};
      if (group) filter.group = group;
      if (keyword) {
        const re = { $regex: escapeRegex(keyword), $options: 'i' };
        const or: object[] = [{ username: re }, { display_name: re }, { email: re }];
        if (/^\d+$/.test(keyword)) or.push({ _id: Number(keyword) });
        filter.$or = or;
      }
      return page(filter, p);
    },
  };
}

/** Creating and changing users: the access-token index follows a token change; a taken name is a conflict. */
function userWrites(conn: Connection): Pick<UserStore, 'create' | 'update' | 'setCustomOAuthId'> {
  const model = userModel(conn);
  const tokenIndex = accessTokens(conn);
  const one = (filter: object) => findOne(model, filter);

  return {
    async create(user) {
      const id = await nextUserId(conn);
      try {
        const doc = await model.create({ ...user, _id: id });
        return toRecord(doc.toObject());
      } catch (err) {
        if (isDuplicateKey(err)) throw conflict('用户名已存在，或已注销');
        throw err;
      }
    },
    async update(id, changes) {
      try {
        const token = changes.access_token;
        const before = token === undefined ? undefined : await one({ _id: id, ...live });
        if (token) await tokenIndex.updateOne({ _id: token }, { $set: { user_id: id } }, { upsert: true });
        const doc = await model
          .findOneAndUpdate({ _id: id, ...live }, { $set: changes }, { new: true })
          .lean<UserDoc>();
        if (before?.access_token && before.access_token !== token) {
          await tokenIndex.deleteOne({ _id: before.access_token, user_id: id });
        }
        return doc ? toRecord(doc) : undefined;
      } catch (err) {
        if (isDuplicateKey(err)) throw conflict('用户名已存在，或已注销');
        throw err;
      }
    },
    async setCustomOAuthId(id, providerId, providerUserId) {
      const path = `custom_oauth_ids.${providerId}`;
      const change = providerUserId ? { $set: { [path]: providerUserId } } : { $unset: { [path]: '' } };
      const doc = await model.findOneAndUpdate({ _id: id, ...live }, change, { new: true }).lean<UserDoc>();
      return doc ? toRecord(doc) : undefined;
    },
  };
}

type QuotaWrites = Pick<
  UserStore,
  'recordInvite' | 'takeAffQuota' | 'dropPendingCredit' | 'claimCheckin' | 'withPendingCredits'
>;

/** The users' side of quota: invite rewards, pending credits (billing not yet told), check-ins. */
function userQuotaWrites(model: UserModel): QuotaWrites {
  return {
    async recordInvite(inviterId, reward) {
      await model.updateOne(
        { _id: inviterId },
        { $inc: { aff_count: 1, aff_quota: wideSum(reward), aff_history_quota: wideSum(reward) } },
      );
    },
    async takeAffQuota(id, amount, credit) {
      const doc = await model
        .findOneAndUpdate(
          { _id: id, ...live, aff_quota: { $gte: amount } },
          { $inc: { aff_quota: wideSum(-amount) }, $push: { pending_credits: credit } },
          { new: true },
        )
        .lean<UserDoc>();
      return doc ? toRecord(doc) : undefined;
    },
    async dropPendingCredit(id, credit) {
      // The whole element, fields in schema order: FerretDB matches $pull only on exact elements
      // (a {request_id} condition silently matches nothing there).
      const { request_id, amount, reason, content } = credit;
      await model.updateOne({ _id: id }, { $pull: { pending_credits: { request_id, amount, reason, content } } });
    },
    async claimCheckin(id, date, credit) {
      const doc = await model
        .findOneAndUpdate(
          { _id: id, ...live, last_checkin_date: { $ne: date } },
          credit
            ? { $set: { last_checkin_date: date }, $push: { pending_credits: credit } }
            : { $set: { last_checkin_date: date } },
          { new: true },
        )
        .lean<UserDoc>();
      return doc ? toRecord(doc) : undefined;
    },
    async withPendingCredits(limit) {
      const docs = await model
        .find({ 'pending_credits.request_id': { $exists: true } })
        .limit(limit)
        .lean<UserDoc[]>();
      return docs.map(toRecord);
    },
  };
}

/** UserStore on MongoDB (FerretDB-compatible: no transactions, no projections on updates). */
export function userRepository(conn: Connection): UserStore {
  return { ...userReads(conn), ...userWrites(conn), ...userQuotaWrites(userModel(conn)) };
}
