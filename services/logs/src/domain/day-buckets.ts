/**
 * The dashboard's consumption sums, one document per user (0: everyone) and UTC hour
 * (`b|<user>|<day>|<hour of day>`; older versions: one per user and day, `b|<user>|<day>`, still
 * read), the hour's sums per model inside it (`h.<hour of day>.<model>.{t,c,q}`: tokens, requests,
 * quota). A batch of the logs consumer writes one document per user it holds (and everyone's),
 * whatever the models: FerretDB rewrites a document per update statement (about 2-5 ms each on
 * this machine, in a bulk write as alone), so the number of documents a batch updates is its cost,
 * and their size too: a findOneAndUpdate took 1.3 ms on a document of 10 values, 4 ms on one of
 * 160 and 10 ms on one of 500, which a user's day document reached by the evening (24 hours x
 * models x 3). Per (user, model, hour) documents made that 1.4 updates per user of a batch, plus
 * one per new (user, day, model) for the list of a day's models.
 *
 * Exactly once: a document records per topic partition the last offset it absorbed
 * (`applied.p<n>`), and a batch adds only its logs above it (see sumsAbove).
 */
import { type Bucket, bucketKey, type OffsetLog } from './log-record.ts';

const HOUR = 3_600;
const DAY = 86_400;

export const dayBucketId = (user: number, day: number) => `b|${user}|${day}`;
/** The sums of one user (0: everyone) and UTC hour (`hour`: of the day). */
export const hourBucketId = (user: number, day: number, hour: number) => `b|${user}|${day}|${hour}`;

/**
 * A model name as a field name: no `.` (a path separator), no leading `$`, never empty (an empty
 * field name fails the whole update: a log without a model, such as an error before routing, is
 * summed under `@`, which encodeURIComponent never writes).
 */
export const modelField = (model: string) => (model ? encodeURIComponent(model).replace(/\./g, '%2E') : EMPTY_MODEL);
const modelOfField = (field: string) => (field === EMPTY_MODEL ? '' : decodeURIComponent(field));
const EMPTY_MODEL = '@';

/** One hour's sums of one model. */
export interface ModelSums {
  t: number;
  c: number;
  q: number;
}

export interface DayBucketDoc {
  _id: string;
  user_id?: number;
  username?: string;
  day?: number;
  /** Hour of the day -> model field -> sums. */
  h?: Record<string, Record<string, ModelSums>>;
  /** Per partition (`p<n>`): the last usage-topic offset this document absorbed. */
  applied?: Record<string, number>;
}

/** The document a consumption log is summed into: its user's (or everyone's) and hour. */
export const bucketDocOf = (l: OffsetLog['log']) =>
  hourBucketId(l.user_id, Math.floor(l.created_at / DAY), Math.floor((l.created_at % DAY) / HOUR));

/** The $inc that adds some logs of one document (one user and day) to it. */
export function dayIncrement(logs: OffsetLog['log'][]): Record<string, number> {
  const inc: Record<string, number> = {};
  const add = (k: string, v: number) => {
    inc[k] = (inc[k] ?? 0) + v;
  };
  for (const l of logs) {
    const path = `h.${Math.floor((l.created_at % DAY) / HOUR)}.${modelField(l.model_name)}`;
    add(`${path}.t`, l.prompt_tokens + l.completion_tokens);
    add(`${path}.c`, 1);
    add(`${path}.q`, l.quota);
  }
  return inc;
}

/** `want` minus `have`, field by field, without the zeros (the correction of a stale watermark). */
export function incDifference(want: Record<string, number>, have: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of new Set([...Object.keys(want), ...Object.keys(have)])) {
    const d = (want[k] ?? 0) - (have[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

/**
 * A partition's logs of one document that it does not hold yet: those above the offset it
 * recorded for the partition. A partition is applied in offset order, so every log at or below
 * that offset is in it; a replay, or a batch cut differently after a crash, adds nothing twice.
 */
export const sumsAbove = (logs: OffsetLog[], applied: number) => logs.filter((l) => l.offset > applied);

/** A document's hours in [lo, hi] (seconds; an hour counts when it starts in it) as (user, model, hour) buckets. */
export function bucketsOfDay(doc: DayBucketDoc, lo: number, hi: number): Bucket[] {
  const [, user = '0', day = '0'] = doc._id.split('|');
  const userId = Number(user);
  const out: Bucket[] = [];
  for (const [hh, models] of Object.entries(doc.h ?? {})) {
    const at = Number(day) * DAY + Number(hh) * HOUR;
    if (at < Math.floor(lo / HOUR) * HOUR || at > hi) continue;
    for (const [field, s] of Object.entries(models)) {
      const model = modelOfField(field);
      out.push({
        key: bucketKey(userId, model, at),
        user_id: userId,
        username: doc.username ?? '',
        model_name: model,
        created_at: at,
        token_used: s.t ?? 0,
        count: s.c ?? 0,
        quota: s.q ?? 0,
      });
    }
  }
  return out;
}
