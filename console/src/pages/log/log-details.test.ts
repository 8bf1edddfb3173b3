import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../api/log.ts';
import { logDetailLines } from './log-details.tsx';

const log = (other: object, extra: Partial<LogEntry> = {}): LogEntry => ({
  id: 1,
  created_at: 0,
  type: 2,
  user_id: 1,
  username: 'u',
  token_name: 't',
  model_name: 'm',
  use_time: 1,
  is_stream: false,
  prompt_tokens: 1,
  completion_tokens: 1,
  quota: 1,
  content: '',
  other: JSON.stringify(other),
  ...extra,
});

describe('log expanded row', () => {
  it('when a log is priced per call, then its price shows and not the ratios it was not billed by', () => {
    const lines = logDetailLines(
      log({ model_price: 0.02, model_ratio: 15, completion_ratio: 2, group_ratio: 1 }),
      false,
    );
    expect(lines.map((l) => [l.label, l.value])).toEqual([
      ['模型价格', '0.02'],
      ['分组倍率', '1'],
    ]);
  });

  it('when an admin opens a retried request, then the channels used are listed; a user does not see them', () => {
    const retried = log(
      { model_ratio: 15, completion_ratio: 2, admin_info: { use_channel: [3, 5] } },
      { group: 'vip', content: 'ok' },
    );
    const admin = logDetailLines(retried, true).map((l) => l.label);
    expect(admin).toEqual(['详情', '模型倍率', '补全倍率', '使用渠道', '分组']);
    expect(logDetailLines(retried, true).find((l) => l.label === '使用渠道')?.value).toBe('3 -> 5');
    expect(logDetailLines(retried, false).map((l) => l.label)).toEqual(['详情', '模型倍率', '补全倍率', '分组']);
  });
});
