import { invalid, precondition } from '@aigw/common/errors';
import { effectiveBaseUrl } from './channel-types.ts';

const TIMEOUT_MS = 15_000;

async function getJson(url: string, headers: Record<string, string>): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    throw precondition(`请求上游失败：${err instanceof Error ? err.message : String(err)}`);
  }
  const text = await res.text();
  if (!res.ok) throw precondition(`上游返回 ${res.status}：${text.slice(0, 200)}`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw precondition('上游返回的不是 JSON');
  }
}

const firstKey = (key: string) => key.split('\n')[0]?.trim() ?? '';
const bearer = (key: string) => ({ Authorization: `Bearer ${firstKey(key)}` });
const ymd = (d: Date) => d.toISOString().slice(0, 10);

/** GET {base}/v1/models of an OpenAI-compatible upstream (type 1 only, spec 01 section 5). */
export async function fetchUpstreamModels(type: number, baseUrl: string, key: string): Promise<string[]> {
  if (type !== 1) throw invalid('仅支持 OpenAI 接口格式');
  if (!key.trim()) throw invalid('请填写密钥');
  const body = (await getJson(`${effectiveBaseUrl(type, baseUrl)}/v1/models`, bearer(key)).catch(() => {
    throw precondition('获取模型列表失败');
  })) as { data?: { id?: unknown }[] };
  if (!Array.isArray(body.data)) throw precondition('获取模型列表失败');
  return [...new Set(body.data.map((m) => m.id).filter((id): id is string => typeof id === 'string'))];
}

/** The provider types with a balance endpoint, and how to read each. */
const BALANCE_READERS: Record<number, (base: string, key: string) => Promise<number>> = {
  // OpenAI-compatible: subscription limit minus this period's usage (cents).
  1: openAiBalance,
  8: openAiBalance,
  // AI Proxy (knowledge-base proxy): points.
  21: async (_base, key) => {
    const body = (await getJson('https://aiproxy.io/api/report/getUserOverview', { 'Api-Key': firstKey(key) })) as {
      data?: { totalPoints?: number };
    };
    return Number(body.data?.totalPoints ?? 0);
  },
  // Moonshot: available balance.
  25: async (base, key) => {
    const body = (await getJson(`${base}/v1/users/me/balance`, bearer(key))) as {
      data?: { available_balance?: number };
    };
    return Number(body.data?.available_balance ?? 0);
  },
  // SiliconCloud: total balance.
  40: async (base, key) => {
    const body = (await getJson(`${base}/v1/user/info`, bearer(key))) as { data?: { totalBalance?: string | number } };
    return Number(body.data?.totalBalance ?? 0);
  },
};

async function openAiBalance(base: string, key: string): Promise<number> {
  const sub = (await getJson(`${base}/v1/dashboard/billing/subscription`, bearer(key))) as { hard_limit_usd?: number };
  const end = new Date(Date.now() + 24 * 3600 * 1000);
  const start = new Date(Date.now() - 100 * 24 * 3600 * 1000);
  const usage = (await getJson(
    `${base}/v1/dashboard/billing/usage?start_date=${ymd(start)}&end_date=${ymd(end)}`,
    bearer(key),
  )) as { total_usage?: number };
  return Number(sub.hard_limit_usd ?? 0) - Number(usage.total_usage ?? 0) / 100;
}

/** Whether a channel type can report its balance. */
export const hasBalanceEndpoint = (type: number) => Object.hasOwn(BALANCE_READERS, type);

/** Asks the provider for the channel's balance. */
export async function fetchBalance(type: number, baseUrl: string, key: string): Promise<number> {
  const reader = BALANCE_READERS[type];
  if (!reader) throw invalid('该渠道类型暂不支持查询余额');
  const balance = await reader(effectiveBaseUrl(type, baseUrl), key);
  if (!Number.isFinite(balance)) throw precondition('上游返回的余额无效');
  return Math.round(balance * 1e6) / 1e6;
}
