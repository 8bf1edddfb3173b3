import type { Stack } from '@aigw/local-stack/stack';
import { eventually } from '@aigw/testkit';
import { type FakeOpenAi, startFakeOpenAi } from '@aigw/testkit/fakes';
import { type Api, setOptions, startMoneyStack, userApi } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface ChannelJson {
  id: number;
  status: number;
  other_info: string;
  response_time: number;
}

describe('channel tests and the monitor: slow channels off, recovered channels back on', () => {
  let stack: Stack;
  let admin: Api;
  let fake: FakeOpenAi;
  beforeAll(async () => {
    fake = await startFakeOpenAi({ key: 'sk-monitor' });
    stack = await startMoneyStack(['relay'], { CHANNEL_MONITOR_INTERVAL_SEC: '5' });
    admin = (await userApi(stack, { role: 10 })).api;
  });
  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
  });

  const get = async (id: number) => (await admin.get<ChannelJson>(`/channel/${id}`)).body.data as ChannelJson;

  it('when a test is slower than the threshold, then the channel is auto-disabled; once fast again the monitor enables it', async () => {
    await setOptions(stack, {
      AutomaticDisableChannelEnabled: 'true',
      AutomaticEnableChannelEnabled: 'true',
      ChannelDisableThreshold: '0.2',
    });
    const created = await admin.post<number[]>('/channel/', {
      name: 'slowpoke',
      type: 1,
      key: 'sk-monitor',
      base_url: fake.url,
      models: 'gpt-4o-mini',
    });
    const id = created.body.data?.[0] as number;
    fake.set({ delayMs: 600 });
    // Tested until the channels service has the options (they arrive through Kafka).
    const slow = await eventually(
      () => admin.get(`/channel/test/${id}`),
      (r) => String(r.body.message).includes('超过阈值'),
      30_000,
    );
    expect(slow.body.success).toBe(false);
    const off = await get(id);
    expect(off.status).toBe(3);
    expect(JSON.parse(off.other_info).status_reason).toContain('超过阈值');

    fake.set({ delayMs: 0 });
    await setOptions(stack, { ChannelDisableThreshold: '30' });
    const back = await eventually(
      () => get(id),
      (c) => c.status === 1,
      40_000,
    );
    expect(back.status).toBe(1);
    expect(back.other_info).toBe('');
  });
});
