/** The log page's filters (spec 02 section 7) and the stored rows they select. */

export interface LogQuery {
  type?: number;
  user_id?: number;
  username?: string;
  token_name?: string;
  model_name?: string;
  start?: number;
  end?: number;
  channel?: number;
  group?: string;
}

/** The stored rows a query selects from `cut` on (the scans, the cursors of the export, the plain store). */
export function toFilter(q: LogQuery, cut = 0): Record<string, unknown> {
  const f: Record<string, unknown> = { hidden: { $ne: true } };
  if (q.type) f.type = q.type;
  if (q.user_id) f.user_id = q.user_id;
  if (q.username) f.username = q.username;
  if (q.token_name) f.token_name = q.token_name;
  if (q.model_name) f.model_name = q.model_name;
  if (q.channel) f.channel = q.channel;
  if (q.group) f.group = q.group;
  if (q.start || q.end || cut) {
    const range: Record<string, number> = {};
    if (q.start || cut) range.$gte = Math.max(q.start ?? 0, cut);
    if (q.end) range.$lte = q.end;
    f.created_at = range;
  }
  return f;
}
