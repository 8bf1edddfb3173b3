/** The plain store's rows (plain-log-store.ts): a stored log with the hour of its `created_at`. */
import type { StoredLog } from './log-rows.ts';

export type PlainRow = StoredLog & { hour: number };

/** The hour of a time in seconds (the rows' `hour`, the first key of the page order). */
export const hourOf = (sec: number) => Math.floor(sec / 3600);
