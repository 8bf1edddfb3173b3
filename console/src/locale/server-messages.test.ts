// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { SERVER_MESSAGE_PATTERNS, serverText, serverTextOf } from './server-messages.ts';

describe('serverText: the server messages in the console language', () => {
  it('when the language is English, then an exact message is in English', () => {
    expect(serverText('令牌名称过长', 'en-US')).toBe('The token name is too long');
    expect(serverText('接口不存在', 'en-US')).toBe('No such endpoint');
    expect(serverText('未登录或登录已过期，请重新登录！', 'en-US')).toBe(
      'Not logged in or the login has expired, please log in again!',
    );
  });

  it('when a message carries values, then they come into the English text in their place', () => {
    expect(serverText('渠道 #12 不存在', 'en-US')).toBe('Channel #12 does not exist');
    expect(serverText('当前分组 default 下对于模型 gpt-4o 无可用渠道', 'en-US')).toBe(
      'No channel available for model gpt-4o in group default',
    );
    expect(serverText('令牌并发请求数超过限制（最多 1 个），请稍后再试', 'en-US')).toBe(
      'Too many concurrent requests for this token (at most 1), please try again later',
    );
    expect(serverText('您已达到请求数限制：1分钟内最多请求5次', 'en-US')).toBe(
      'You have reached the request limit: at most 5 requests in 1 minutes',
    );
    expect(serverText('通过兑换码充值 ＄0.500000 额度，兑换码ID 9', 'en-US')).toBe(
      'Topped up $0.500000 quota with a redemption code, code ID 9',
    );
    expect(serverText('模型倍率 2.5，补全倍率 4，分组倍率 1', 'en-US')).toBe(
      'Model ratio 2.5, completion ratio 4, group ratio 1',
    );
  });

  it('when a value is itself a known message, then it is translated too', () => {
    expect(serverText('每周预算必须为非负整数（0 表示不限制）', 'en-US')).toBe(
      'Weekly budget must be a non-negative integer (0 means no limit)',
    );
    expect(serverText('请求体 name 无效：必须是字符串', 'en-US')).toBe(
      'Request body name is invalid: must be a string',
    );
    expect(serverText('修改系统设置 Notice：「（空）」→「hello」', 'en-US')).toBe(
      'Changed setting Notice: "(empty)" → "hello"',
    );
  });

  it('when a value is free text (a name, an upstream answer), then the frame is translated around it', () => {
    expect(serverText('编辑渠道 #3（主力渠道），字段：name、key', 'en-US')).toBe(
      'Edited channel #3 (主力渠道), fields: name, key',
    );
    expect(serverText('通道「主力」（#7）已被禁用，原因：上游返回 401', 'en-US')).toBe(
      'Channel "主力" (#7) was disabled, reason: The upstream answered 401',
    );
    expect(serverText('管理员增加用户额度 500000 点额度（补偿）', 'en-US')).toBe(
      "An administrator increased the user's quota by 500000 quota (补偿)",
    );
  });

  it('when a token budget is spent, then the period is named in the sentence', () => {
    expect(serverText('令牌每日预算不足', 'en-US')).toBe("The token's daily budget is used up");
  });

  it('when a pattern wants catalogue words and one is unknown, then the message stays whole', () => {
    expect(serverText('令牌请求频率超过限制，请稍后再试', 'en-US')).toBe(
      'Token RPM limit exceeded, please try again later',
    );
    expect(serverText('某某请求频率超过限制，请稍后再试', 'en-US')).toBe('某某请求频率超过限制，请稍后再试');
    expect(serverText('第一句，第二句', 'en-US')).toBe('第一句，第二句');
  });

  it('when the catalogue is read, then every English text uses only the values its pattern captures', () => {
    for (const [zh, en] of SERVER_MESSAGE_PATTERNS) {
      const values = zh.split('{}').length - 1;
      const used = [...en.matchAll(/\{(\d)\}/g)].map((m) => Number(m[1]));
      expect(values, zh).toBeGreaterThan(0);
      expect(Math.max(...used), zh).toBe(values);
      expect(new Set(used).size, zh).toBe(values);
    }
  });

  it('when a message is unknown, then it is shown as the server wrote it', () => {
    expect(serverText('一个没有收录的消息', 'en-US')).toBe('一个没有收录的消息');
    expect(serverText('Deadline exceeded', 'en-US')).toBe('Deadline exceeded');
    expect(serverText('', 'en-US')).toBe('');
    expect(serverTextOf(undefined, 'en-US')).toBeUndefined();
  });

  it('when the language is Chinese, then every message is unchanged', () => {
    expect(serverText('渠道 #12 不存在', 'zh-CN')).toBe('渠道 #12 不存在');
    expect(serverText('令牌名称过长', 'zh-CN')).toBe('令牌名称过长');
  });

  it('when no language was chosen, then messages stay Chinese (the stored English choice: request.test.ts)', () => {
    expect(serverText('令牌名称过长')).toBe('令牌名称过长');
  });
});
