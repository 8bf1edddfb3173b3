import { escapeRegex, insertWithNextId, isDuplicateKey } from '@aigw/common';
import type { Collection, Connection } from 'mongoose';

/** A vendor of models (new-api's vendor meta); `name` unique. */
export interface VendorDoc {
  _id: number;
  name: string;
  description: string;
  icon: string;
  status: number;
  created_time: number;
  updated_time: number;
}

/** Metadata of a model (new-api's model meta); `model_name` unique. */
export interface ModelMetaDoc {
  _id: number;
  model_name: string;
  description: string;
  icon: string;
  tags: string;
  vendor_id: number;
  endpoints: string;
  status: number;
  sync_official: number;
  name_rule: number;
  created_time: number;
  updated_time: number;
}

type Fields<T> = Omit<T, '_id'>;

/** One catalogue table: numeric ids, a unique name field, paged search. */
export interface MetaTable<T extends { _id: number }> {
  /** The new row's id; `undefined` when the unique name is taken (nothing written). */
  insert(doc: Fields<T>): Promise<number | undefined>;
  get(id: number): Promise<T | null>;
  byName(name: string): Promise<T | null>;
  byNames(names: string[]): Promise<T[]>;
  byIds(ids: number[]): Promise<T[]>;
  all(): Promise<T[]>;
  /** Newest first; `keyword` matches any of `fields` (case-insensitive, literally). */
  page(q: {
    keyword?: string;
    fields?: (keyof T & string)[];
    filter?: Record<string, unknown>;
    skip: number;
    limit: number;
  }): Promise<{ items: T[]; total: number }>;
  /** Writes `set`; false when the row is gone; throws a duplicate-key error when the name is taken. */
  update(id: number, set: Partial<Fields<T>>): Promise<boolean>;
  remove(id: number): Promise<boolean>;
}

function metaTable<T extends { _id: number }>(conn: Connection, name: string, unique: keyof T & string) {
  const rows = conn.collection(name) as unknown as Collection<T>;
  const table: MetaTable<T> & { ensureIndexes(): Promise<void> } = {
    async ensureIndexes() {
      await rows.createIndex({ [unique]: 1 } as never, { unique: true });
    },
    async insert(doc) {
      let taken = false;
      const id = await insertWithNextId(conn, name, async (id) => {
        try {
          await rows.insertOne({ ...doc, _id: id } as never);
        } catch (err) {
          // A taken name is not a taken id: stop instead of drawing the next id.
          if (isDuplicateKey(err) && (await table.byName(String(doc[unique as keyof typeof doc])))) taken = true;
          else throw err;
        }
      });
      return taken ? undefined : id;
    },
    get: (id) => rows.findOne({ _id: id } as never) as Promise<T | null>,
    byName: (value) => rows.findOne({ [unique]: value } as never) as Promise<T | null>,
    byNames: (values) =>
      values.length === 0
        ? Promise.resolve([])
        : (rows.find({ [unique]: { $in: values } } as never).toArray() as Promise<T[]>),
    byIds: (ids) =>
      ids.length === 0 ? Promise.resolve([]) : (rows.find({ _id: { $in: ids } } as never).toArray() as Promise<T[]>),
    all: () => rows.find({}).toArray() as Promise<T[]>,
    async page({ keyword, fields = [], filter = {}, skip, limit }) {
      const q: Record<string, unknown> = { ...filter };
      if (keyword) {
        const re = { $regex: escapeRegex(keyword), $options: 'i' };
        q.$or = fields.map((f) => ({ [f]: re }));
      }
      const [items, total] = await Promise.all([
        rows
          .find(q as never)
          .sort({ _id: -1 })
          .skip(skip)
          .limit(limit)
          .toArray() as Promise<T[]>,
        rows.countDocuments(q as never),
      ]);
      return { items, total };
    },
    async update(id, set) {
      const r = await rows.updateOne({ _id: id } as never, { $set: set } as never);
      return r.matchedCount > 0;
    },
    async remove(id) {
      return (await rows.deleteOne({ _id: id } as never)).deletedCount > 0;
    },
  };
  return table;
}

export type VendorTable = MetaTable<VendorDoc>;
export type ModelMetaTable = MetaTable<ModelMetaDoc>;

/** The catalogue's two tables (collections `vendors` and `model_metas`). */
export function modelMetaRepository(conn: Connection) {
  const vendors = metaTable<VendorDoc>(conn, 'vendors', 'name');
  const models = metaTable<ModelMetaDoc>(conn, 'model_metas', 'model_name');
  return {
    vendors: vendors as VendorTable,
    models: models as ModelMetaTable,
    async ensureIndexes() {
      await vendors.ensureIndexes();
      await models.ensureIndexes();
    },
  };
}
