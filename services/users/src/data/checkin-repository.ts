import type { Connection } from 'mongoose';
import type { CheckinStore } from '../domain/checkin.ts';

/** A day's check-in; `_id` is `<user id>:<YYYY-MM-DD>` (one row per user and day). */
interface CheckinDoc {
  _id: string;
  user_id: number;
  checkin_date: string;
  quota_awarded: number;
  created_at: number;
}

/** The `checkins` collection. */
export function checkinRepository(conn: Connection): CheckinStore {
  const rows = conn.collection<CheckinDoc>('checkins');
  const out = (d: CheckinDoc) => ({ date: d.checkin_date, quota: d.quota_awarded });
  return {
    async record(userId, date, quota) {
      await rows.updateOne(
        { _id: `${userId}:${date}` },
        { $setOnInsert: { user_id: userId, checkin_date: date, quota_awarded: quota, created_at: Date.now() } },
        { upsert: true },
      );
    },
    async between(userId, from, to) {
      const docs = await rows
        .find({ user_id: userId, checkin_date: { $gte: from, $lte: to } })
        .sort({ checkin_date: -1 })
        .toArray();
      return docs.map(out);
    },
    async all(userId) {
      return (await rows.find({ user_id: userId }).toArray()).map(out);
    },
    has: async (userId, date) => (await rows.countDocuments({ _id: `${userId}:${date}` })) > 0,
  };
}
