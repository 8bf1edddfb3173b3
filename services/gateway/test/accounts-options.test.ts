import { createClient } from '@aigw/common';
import type { Stack } from '@aigw/local-stack/stack';
import { OptionsService } from '@aigw/proto/users/v1/users';
import { eventually } from '@aigw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, newUser, rootClient, startAccountsStack } from './accounts-harness.ts';

type OptionList = { key: string; value: string }[];

/** System options through the gateway: root only, secrets never read back, validation, status. */
describe('accounts: options and the public status', () => {
  let stack: Stack;
  let url: string;
  let root: Client;

  beforeAll(async () => {
    stack = await startAccountsStack();
    url = stack.gatewayUrl;
    root = await rootClient(url);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const optionValue = async (key: string) =>
    (await root.get<OptionList>('/option/')).body.data?.find((o) => o.key === key)?.value;

  it('when root lists options, then the defaults come back and write-only secrets never do', async () => {
    await root.put('/option/', { key: 'SMTPToken', value: 'very-secret' });
    await root.put('/option/', { key: 'GitHubClientSecret', value: 'gh-very-secret' });
    const res = await root.get<OptionList>('/option/');
    expect(res.body.success).toBe(true);
    const map = Object.fromEntries(res.body.data!.map((o) => [o.key, o.value]));
    expect(map).toMatchObject({
      QuotaForNewUser: '0',
      QuotaForInviter: '0',
      QuotaForInvitee: '0',
      PreConsumedQuota: '500',
      QuotaRemindThreshold: '1000',
      ChannelDisableThreshold: '5',
      RetryTimes: '0',
      QuotaPerUnit: '500000',
      AutomaticDisableChannelEnabled: 'false',
      AutomaticEnableChannelEnabled: 'false',
      DataExportEnabled: 'true',
      DataExportInterval: '5',
      DataExportDefaultTime: 'hour',
      GroupRatio: '{"default":1,"vip":1,"svip":1}',
      UserUsableGroups: '{"default":"默认分组","vip":"vip分组"}',
      Price: '7.3',
      MinTopUp: '1',
      SMTPPort: '587',
      PasswordLoginEnabled: 'true',
      RegisterEnabled: 'true',
    });
    for (const secret of [
      'SMTPToken',
      'GitHubClientSecret',
      'WeChatServerToken',
      'TelegramBotToken',
      'TurnstileSecretKey',
      'EpayKey',
      'WorkerValidKey',
    ]) {
      expect(map, secret).not.toHaveProperty(secret);
    }
    expect(JSON.stringify(res.body)).not.toContain('very-secret');
  });

  it.each([
    ['NoSuchKey', '1', '未知的设置项：NoSuchKey'],
    ['TopupGroupRatio', '{bad', '充值分组倍率不是合法的 JSON 字符串'],
    ['ModelRatio', 'not json', 'ModelRatio 不是合法的 JSON 字符串'],
    ['ModelRatio', '{"gpt-4o":"high"}', 'ModelRatio 不是合法的 JSON 字符串'],
    ['GroupRatio', '[1,2]', 'GroupRatio 不是合法的 JSON 字符串'],
    ['UserUsableGroups', '{"default":1}', 'UserUsableGroups 不是合法的 JSON 字符串'],
    ['Chats', '{"a":"b"}', 'Chats 不是合法的 JSON 字符串'],
    ['MinTopUp', '0', '最低充值数量不能小于 1'],
    ['Price', '-1', '充值价格必须大于 0'],
    ['RegisterEnabled', 'yes', 'RegisterEnabled 的值必须是 true 或 false'],
    ['QuotaForNewUser', '1.5', 'QuotaForNewUser 必须是整数'],
    ['SMTPPort', '70000', 'SMTP 端口无效'],
    ['DataExportInterval', '0', '数据看板更新间隔不能小于 1 分钟'],
    ['DataExportDefaultTime', 'month', '数据看板默认时间粒度必须是 hour、day 或 week'],
    ['EmailDomainRestrictionEnabled', 'true', '无法启用邮箱域名限制，请先填入限制的邮箱域名！'],
    ['TurnstileCheckEnabled', 'true', '无法启用 Turnstile 校验，请先填入 Turnstile 校验相关配置信息！'],
    ['TelegramOAuthEnabled', 'true', '无法启用 Telegram OAuth，请先填入 Telegram Bot Token 以及 Bot 名称！'],
  ])('when %s is saved as %j, then it is refused with %j', async (key, value, message) => {
    if (key === 'EmailDomainRestrictionEnabled') await root.put('/option/', { key: 'EmailDomainWhitelist', value: '' });
    const res = await root.put('/option/', { key, value });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: false, message });
  });

  it('when addresses are saved with trailing slashes, then the slashes are stripped', async () => {
    for (const key of ['ServerAddress', 'WorkerUrl', 'PayAddress', 'WeChatServerAddress']) {
      expect((await root.put('/option/', { key, value: `https://${key.toLowerCase()}.example.com//` })).body).toEqual({
        success: true,
        message: '保存成功',
      });
      expect(await optionValue(key)).toBe(`https://${key.toLowerCase()}.example.com`);
    }
    expect((await new Client(url).get<{ server_address: string }>('/status')).body.data?.server_address).toBe(
      'https://serveraddress.example.com',
    );
  });

  it('when the SMTP port is set to 465, then SSL is switched on with it', async () => {
    await root.put('/option/', { key: 'SMTPSSLEnabled', value: 'false' });
    await root.put('/option/', { key: 'SMTPPort', value: '465' });
    expect(await optionValue('SMTPPort')).toBe('465');
    expect(await optionValue('SMTPSSLEnabled')).toBe('true');
  });

  it('when values arrive as JSON booleans or numbers, then they are saved as text', async () => {
    expect((await root.put('/option/', { key: 'DrawingEnabled', value: true })).body.success).toBe(true);
    expect((await root.put('/option/', { key: 'RetryTimes', value: 3 })).body.success).toBe(true);
    expect(await optionValue('DrawingEnabled')).toBe('true');
    expect(await optionValue('RetryTimes')).toBe('3');
  });

  it('when root saves a setting, then /api/status shows it at once', async () => {
    for (const [key, value] of [
      ['SystemName', '新的网关'],
      ['Logo', 'https://example.com/logo.png'],
      ['Footer', '<b>页脚</b>'],
      ['QuotaPerUnit', '1000'],
      ['DisplayInCurrencyEnabled', 'false'],
      ['DrawingEnabled', 'true'],
      ['TaskEnabled', 'true'],
      ['DataExportEnabled', 'false'],
      ['DataExportDefaultTime', 'week'],
      ['DefaultCollapseSidebar', 'true'],
      ['MjNotifyEnabled', 'true'],
      ['ChatLink', 'https://chat.example.com'],
      ['Chats', '[{"Chat A":"https://a.example.com/?key={key}"}]'],
      ['TopUpLink', 'https://shop.example.com'],
      ['MinTopUp', '5'],
      ['Price', '7.5'],
    ]) {
      expect((await root.put('/option/', { key, value })).body.success, key).toBe(true);
    }
    const status = (await new Client(url).get<Record<string, unknown>>('/status')).body.data!;
    expect(status).toMatchObject({
      system_name: '新的网关',
      logo: 'https://example.com/logo.png',
      footer_html: '<b>页脚</b>',
      quota_per_unit: 1000,
      display_in_currency: false,
      enable_drawing: true,
      enable_task: true,
      enable_data_export: false,
      data_export_default_time: 'week',
      default_collapse_sidebar: true,
      mj_notify_enabled: true,
      chat_link: 'https://chat.example.com',
      chats: [{ 'Chat A': 'https://a.example.com/?key={key}' }],
      top_up_link: 'https://shop.example.com',
      min_topup: 5,
      price: 7.5,
      email_verification: false,
      github_oauth: false,
      wechat_login: false,
      telegram_oauth: false,
      turnstile_check: false,
    });
    for (const field of ['smtp_token', 'SMTPToken', 'github_client_secret']) expect(status).not.toHaveProperty(field);
  });

  it('when an option is changed through the users service directly, then the gateway sees it within a second', async () => {
    const options = createClient(OptionsService, stack.env.USERS_ADDR!);
    try {
      const started = Date.now();
      await options.updateOption({ key: 'Notice', value: '维护通知' });
      const res = await eventually(
        () => new Client(url).get<string>('/notice'),
        (r) => r.body.data === '维护通知',
        5000,
      );
      expect(res.body.data).toBe('维护通知');
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      options.close();
    }
  });

  it('when an admin or an ordinary user touches options, or a mismatched New-Api-User, then they are refused', async () => {
    const { client, id } = await newUser(url);
    expect((await client.get('/option/')).status).toBe(403);
    expect((await client.put('/option/', { key: 'SystemName', value: 'hack' })).status).toBe(403);
    await root.post('/user/manage', { id, action: 'promote' });
    expect((await client.get('/option/')).status).toBe(403);
    expect((await new Client(url).get('/option/')).status).toBe(401);
    const wrongHeader = await root.get('/option/', undefined, { 'New-Api-User': String(id) });
    expect(wrongHeader.status).toBe(401);
    expect(await optionValue('SystemName')).not.toBe('hack');
  });
});
