import { CHANNEL_STATUS, splitList } from './channel-rules.ts';

/** One row of the abilities index. */
export interface AbilityRow {
  _id: string;
  group: string;
  model: string;
  channel_id: number;
  priority: number;
  weight: number;
  enabled: boolean;
}

/** The abilities a channel must have: one per (group, model) of its lists. */
export function abilitiesOf(ch: {
  id: number;
  models: string;
  group: string;
  priority: number;
  weight: number;
  status: number;
}): AbilityRow[] {
  const rows: AbilityRow[] = [];
  const groups = splitList(ch.group);
  for (const group of groups.length > 0 ? groups : ['default']) {
    for (const model of splitList(ch.models)) {
      rows.push({
        _id: `${ch.id}|${group}|${model}`,
        group,
        model,
        channel_id: ch.id,
        priority: ch.priority,
        weight: ch.weight,
        enabled: ch.status === CHANNEL_STATUS.enabled,
      });
    }
  }
  return rows;
}
