import { isDuplicateKey } from '@aigw/common';
import type { Collection, Connection } from 'mongoose';
import type { AbilityRow } from '../domain/abilities.ts';

/** The abilities index: group x model -> channel, priority, weight, enabled. */
export interface AbilityRepository {
  ensureIndexes(): Promise<void>;
  /** Makes the rows of one channel exactly `rows` (updates, inserts, then deletes the rest). */
  replaceOf(channelId: number, rows: AbilityRow[]): Promise<void>;
  removeOf(channelIds: number[]): Promise<void>;
  all(): Promise<AbilityRow[]>;
  enabled(filter?: { group?: string; model?: string }): Promise<AbilityRow[]>;
}

export function abilityRepository(conn: Connection): AbilityRepository {
  const abilities = conn.collection<AbilityRow>('abilities') as unknown as Collection<AbilityRow>;
  return {
    async ensureIndexes() {
      await abilities.createIndex({ channel_id: 1 });
      await abilities.createIndex({ group: 1, model: 1 });
    },
    async replaceOf(channelId, rows) {
      const first = rows[0];
      if (first) {
        // Every row of a channel shares priority, weight and enabled.
        await abilities.updateMany(
          { channel_id: channelId },
          { $set: { priority: first.priority, weight: first.weight, enabled: first.enabled } },
        );
        try {
          await abilities.insertMany(rows, { ordered: false });
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
        }
      }
      await abilities.deleteMany({ channel_id: channelId, _id: { $nin: rows.map((r) => r._id) } });
    },
    async removeOf(channelIds) {
      if (channelIds.length > 0) await abilities.deleteMany({ channel_id: { $in: channelIds } });
    },
    all: () => abilities.find({}).toArray(),
    enabled: (filter = {}) => {
      const q: Record<string, unknown> = { enabled: true };
      if (filter.group !== undefined) q.group = filter.group;
      if (filter.model !== undefined) q.model = filter.model;
      return abilities.find(q).toArray();
    },
  };
}
