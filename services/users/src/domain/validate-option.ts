import { checkAutoGroups, checkGroupGroupRatio, checkSpecialUsableGroups, parseStatusCodeRanges } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import { isOptionKey, OPTION_CATALOGUE } from './option-catalogue.ts';

/** Messages of spec 01 section 5 for JSON-valued settings. */
const JSON_MESSAGES: Record<string, string> = {
  TopupGroupRatio: '充值分组倍率不是合法的 JSON 字符串',
};

/**
 * Validates and normalises one option value before it is saved (PUT /api/option/). Returns the
 * value to store plus any companion changes the rule implies (port 465 forces SSL).
 */
export function validateOption(key: string, rawValue: string): { value: string; implied: [string, string][] } {
  if (!isOptionKey(key)) throw invalid(`未知的设置项：${key}`);
  const spec = OPTION_CATALOGUE[key];
  let value = rawValue;
  const implied: [string, string][] = [];
  switch (spec.kind) {
    case 'bool':
      if (value !== 'true' && value !== 'false') throw invalid(`${key} 的值必须是 true 或 false`);
      break;
    case 'int':
      if (!/^-?\d+$/.test(value.trim())) throw invalid(`${key} 必须是整数`);
      value = String(Number.parseInt(value.trim(), 10));
      break;
    case 'float':
      if (value.trim() === '' || !Number.isFinite(Number(value))) throw invalid(`${key} 必须是数字`);
      value = String(Number(value));
      break;
    case 'json':
      try {
        JSON.parse(value);
      } catch {
        throw invalid(JSON_MESSAGES[key] ?? `${key} 不是合法的 JSON 字符串`);
      }
      break;
    case 'url':
      value = value.trim().replace(/\/+$/, '');
      break;
    case 'text':
      break;
  }
  if (key === 'MinTopUp' && Number(value) < 1) throw invalid('最低充值数量不能小于 1');
  if (key === 'Price' && Number(value) <= 0) throw invalid('充值价格必须大于 0');
  if (key === 'SMTPPort') {
    const port = Number(value);
    if (port < 1 || port > 65535) throw invalid('SMTP 端口无效');
    if (port === 465) implied.push(['SMTPSSLEnabled', 'true']);
  }
  if (key === 'DataExportInterval' && Number(value) < 1) throw invalid('数据看板更新间隔不能小于 1 分钟');
  if (key === 'DataExportDefaultTime' && !['hour', 'day', 'week'].includes(value)) {
    throw invalid('数据看板默认时间粒度必须是 hour、day 或 week');
  }
  if (NUMBER_MAPS.has(key) && !isNumberMap(value)) {
    throw invalid(JSON_MESSAGES[key] ?? `${key} 不是合法的 JSON 字符串`);
  }
  if (key === 'CustomOAuthProviders' && !isProviderStore(value)) {
    throw invalid('CustomOAuthProviders 必须是 {"next_id": 正整数, "providers": [对象, ...]}');
  }
  if (key === 'LinuxDOMinimumTrustLevel' && (Number(value) < 0 || Number(value) > 4)) {
    throw invalid('Linux DO 最低信任等级必须在 0 到 4 之间');
  }
  if (key === 'TimeZone' && value.trim() && !isTimeZone(value.trim())) throw invalid('无效的时区名称');
  if ((key === 'checkin_setting.min_quota' || key === 'checkin_setting.max_quota') && Number(value) < 0) {
    throw invalid('签到奖励额度不能为负数');
  }
  if (key === 'UserUsableGroups' && !isStringMap(value)) throw invalid('UserUsableGroups 不是合法的 JSON 字符串');
  if (key === 'Chats' && !isChatList(value)) throw invalid('Chats 不是合法的 JSON 字符串');
  if (key === 'AutomaticDisableStatusCodes' || key === 'AutomaticRetryStatusCodes') {
    try {
      value = statusCodeRangesText(value);
    } catch (err) {
      throw invalid(`${key}：${(err as Error).message}，格式如 401,403,500-599（100 到 599）`);
    }
  }
  if (key === 'AutomaticDisableKeywords') value = parseKeywordLines(value);
  if (key === 'ModelRequestRateLimitDurationMinutes' && Number(value) < 1) throw invalid('限制周期不能小于 1 分钟');
  if ((key === 'ModelRequestRateLimitCount' || key === 'ModelRequestRateLimitSuccessCount') && Number(value) < 0) {
    throw invalid('请求次数限制不能为负数');
  }
  if (key === 'ModelRequestRateLimitGroup') checkRateLimitGroups(value);
  if (key === 'ModelPriceTiers') checkPriceTiers(value);
  const groupRule = GROUP_RULES[key];
  if (groupRule) {
    try {
      groupRule(JSON.parse(value));
    } catch (err) {
      throw invalid(`${key} 格式错误：${(err as Error).message}`);
    }
  }
  return { value, implied };
}

/** The group options' shapes (services/common/src/groups.ts). */
const GROUP_RULES: Record<string, (v: unknown) => void> = {
  GroupGroupRatio: checkGroupGroupRatio,
  'group_ratio_setting.group_special_usable_group': checkSpecialUsableGroups,
  AutoGroups: checkAutoGroups,
};

const TIER_FIELDS = ['above_prompt_tokens', 'model_ratio', 'completion_ratio', 'cache_ratio', 'create_cache_ratio'];

/**
 * ModelPriceTiers: {"model": [{"above_prompt_tokens": n, "model_ratio": r, ...}]}, thresholds
 * whole, positive and distinct per model, ratios non-negative numbers; nothing else.
 */
function checkPriceTiers(value: string): void {
  const fail = (why: string) => invalid(`ModelPriceTiers 格式错误：${why}`);
  const parsed: unknown = JSON.parse(value);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw fail('应为 {"模型名": [阶梯, ...]}');
  for (const [model, tiers] of Object.entries(parsed)) {
    if (!Array.isArray(tiers) || tiers.length === 0) throw fail(`模型 ${model} 的阶梯应为非空数组`);
    const seen = new Set<number>();
    for (const t of tiers as unknown[]) {
      if (!t || typeof t !== 'object' || Array.isArray(t)) throw fail(`模型 ${model} 的阶梯应为对象`);
      const tier = t as Record<string, unknown>;
      const extra = Object.keys(tier).find((k) => !TIER_FIELDS.includes(k));
      if (extra) throw fail(`模型 ${model} 的阶梯有未知字段 ${extra}`);
      const above = tier.above_prompt_tokens;
      if (typeof above !== 'number' || !Number.isInteger(above) || above < 1) {
        throw fail(`模型 ${model} 的 above_prompt_tokens 必须是正整数`);
      }
      if (seen.has(above)) throw fail(`模型 ${model} 的 above_prompt_tokens ${above} 重复`);
      seen.add(above);
      if (tier.model_ratio === undefined) throw fail(`模型 ${model} 的阶梯缺少 model_ratio`);
      for (const k of TIER_FIELDS.slice(1)) {
        const v = tier[k];
        if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) {
          throw fail(`模型 ${model} 的 ${k} 必须是非负数`);
        }
      }
    }
  }
}

/** JSON options that must map names to non-negative numbers. */
const NUMBER_MAPS = new Set([
  'GroupRatio',
  'TopupGroupRatio',
  'ModelRatio',
  'CompletionRatio',
  'ModelPrice',
  'CacheRatio',
  'CacheCreationRatio',
  'CreateCacheRatio',
  'AudioRatio',
  'AudioCompletionRatio',
  'ImageRatio',
]);

/**
 * Switches that need other settings first (one-api's checks): switching one on while its
 * settings are empty would offer a login method or a restriction that cannot work.
 */
const PREREQUISITES: Record<string, { needs: string[]; message: string }> = {
  GitHubOAuthEnabled: {
    needs: ['GitHubClientId', 'GitHubClientSecret'],
    message: '无法启用 GitHub OAuth，请先填入 GitHub Client Id 以及 GitHub Client Secret！',
  },
  EmailDomainRestrictionEnabled: {
    needs: ['EmailDomainWhitelist'],
    message: '无法启用邮箱域名限制，请先填入限制的邮箱域名！',
  },
  WeChatAuthEnabled: {
    needs: ['WeChatServerAddress', 'WeChatServerToken'],
    message: '无法启用微信登录，请先填入微信登录相关配置信息！',
  },
  TurnstileCheckEnabled: {
    needs: ['TurnstileSiteKey', 'TurnstileSecretKey'],
    message: '无法启用 Turnstile 校验，请先填入 Turnstile 校验相关配置信息！',
  },
  'oidc.enabled': {
    needs: ['oidc.client_id', 'oidc.client_secret', 'oidc.well_known'],
    message: '无法启用 OIDC 登录，请先填入 Client Id、Client Secret 以及 Well-Known URL！',
  },
  LinuxDOOAuthEnabled: {
    needs: ['LinuxDOClientId', 'LinuxDOClientSecret'],
    message: '无法启用 Linux DO OAuth，请先填入 Linux DO Client Id 以及 Linux DO Client Secret！',
  },
  'discord.enabled': {
    needs: ['discord.client_id', 'discord.client_secret'],
    message: '无法启用 Discord OAuth，请先填入 Discord Client Id 以及 Discord Client Secret！',
  },
  TelegramOAuthEnabled: {
    needs: ['TelegramBotToken', 'TelegramBotName'],
    message: '无法启用 Telegram OAuth，请先填入 Telegram Bot Token 以及 Bot 名称！',
  },
};

/** Refuses to switch a login method or restriction on before its settings are filled in. */
export function checkPrerequisites(key: string, value: string, current: Record<string, string>): void {
  const rule = PREREQUISITES[key];
  if (rule && value === 'true' && rule.needs.some((k) => !current[k]?.trim())) throw invalid(rule.message);
}

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function isStringMap(raw: string): boolean {
  const parsed: unknown = JSON.parse(raw);
  return (
    typeof parsed === 'object' &&
    parsed !== null &&
    !Array.isArray(parsed) &&
    Object.values(parsed).every((v) => typeof v === 'string')
  );
}

function isProviderStore(raw: string): boolean {
  const parsed = JSON.parse(raw) as { next_id?: unknown; providers?: unknown } | null;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return false;
  const { next_id: next, providers } = parsed;
  return (
    typeof next === 'number' &&
    Number.isInteger(next) &&
    next >= 1 &&
    Array.isArray(providers) &&
    providers.every((p) => typeof p === 'object' && p !== null && !Array.isArray(p))
  );
}

function isChatList(raw: string): boolean {
  const parsed: unknown = JSON.parse(raw);
  return (
    Array.isArray(parsed) &&
    parsed.every(
      (item) =>
        typeof item === 'object' &&
        item !== null &&
        !Array.isArray(item) &&
        Object.values(item).every((v) => typeof v === 'string'),
    )
  );
}

function isNumberMap(raw: string): boolean {
  const parsed: unknown = JSON.parse(raw);
  return (
    typeof parsed === 'object' &&
    parsed !== null &&
    !Array.isArray(parsed) &&
    Object.values(parsed).every((v) => typeof v === 'number' && v >= 0)
  );
}

/** Status code rules in new-api's format, normalised ("500-599, 401" -> "401,500-599"). */
function statusCodeRangesText(value: string): string {
  return parseStatusCodeRanges(value)
    .map((r) => (r.start === r.end ? String(r.start) : `${r.start}-${r.end}`))
    .join(',');
}

/** Keywords one per line, trimmed, blank lines dropped (matched case-insensitively). */
const parseKeywordLines = (value: string) =>
  value
    .split('\n')
    .map((k) => k.trim())
    .filter(Boolean)
    .join('\n');

/** ModelRequestRateLimitGroup: {"group": [total >= 0, success >= 1]} (new-api's check). */
function checkRateLimitGroups(value: string): void {
  const parsed: unknown = JSON.parse(value);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalid('分组速率限制必须是 JSON 对象，例如 {"vip": [0, 2000]}');
  }
  for (const [group, pair] of Object.entries(parsed)) {
    const ok =
      Array.isArray(pair) &&
      pair.length === 2 &&
      pair.every((n) => Number.isInteger(n) && n <= 2 ** 31 - 1) &&
      pair[0] >= 0 &&
      pair[1] >= 1;
    if (!ok) throw invalid(`分组 ${group} 的速率限制必须是 [总请求数 >= 0, 成功请求数 >= 1]`);
  }
}
