import { Alert, Card, Input, Message, Space, Table, type TableColumnProps, Tag, Tooltip } from '@arco-design/web-react';
import { IconSearch } from '@arco-design/web-react/icon';
import { useEffect, useMemo, useState } from 'react';
import { getPricing, type PricingEntry } from '../../api/pricing.ts';
import { useT } from '../../locale/index.tsx';
import { tr } from '../../locale/translate.ts';
import { useUser } from '../../store/user-context.tsx';
import { copyText } from '../../utils/clipboard.ts';

/** A one-hour cache write against a 5-minute one (the relay's rule: Anthropic's 2x against 1.25x). */
export const CACHE_1H_MULTIPLIER = 6 / 3.75;

/** One long-context tier's prices per 1M tokens: above `above` prompt tokens. */
export interface TierPrices {
  above: number;
  prompt: string;
  completion: string;
}

export interface Prices {
  prompt?: string;
  completion?: string;
  perCall?: string;
  audioPrompt?: string;
  audioCompletion?: string;
  cacheRead?: string;
  cacheWrite?: string;
  cacheWrite1h?: string;
  tiers?: TierPrices[];
}

const dollars = (n: number) => `$${n.toFixed(4)}`;

/**
 * Prices per 1M tokens (spec 02 section 9): prompt = model ratio x 2 x group ratio dollars,
 * completion = that x completion ratio; per-call = model price x group ratio. Cache reads and
 * writes cost the prompt price x their ratio (an hour's write x 1.6), where set; long-context
 * tiers replace the ratios above their prompt size.
 */
export function priceOf(p: PricingEntry, groupRatio: number): Prices {
  if (p.quota_type === 1) return { perCall: dollars(p.model_price * groupRatio) };
  const prompt = p.model_ratio * 2 * groupRatio;
  const out: Prices = { prompt: dollars(prompt), completion: dollars(prompt * p.completion_ratio) };
  // Audio ratios apply likewise (spec 01 section 9): audio input = text input x audio ratio,
  // audio output = audio input x audio completion ratio.
  if (p.audio_ratio && p.audio_ratio > 0) {
    const audio = prompt * p.audio_ratio;
    out.audioPrompt = dollars(audio);
    out.audioCompletion = dollars(audio * (p.audio_completion_ratio ?? 1));
  }
  if (p.cache_ratio !== undefined) out.cacheRead = dollars(prompt * p.cache_ratio);
  if (p.create_cache_ratio !== undefined) {
    out.cacheWrite = dollars(prompt * p.create_cache_ratio);
    out.cacheWrite1h = dollars(prompt * p.create_cache_ratio * CACHE_1H_MULTIPLIER);
  }
  if (p.price_tiers?.length) {
    out.tiers = [...p.price_tiers]
      .sort((a, b) => a.above_prompt_tokens - b.above_prompt_tokens)
      .map((t) => {
        const tierPrompt = t.model_ratio * 2 * groupRatio;
        return {
          above: t.above_prompt_tokens,
          prompt: dollars(tierPrompt),
          completion: dollars(tierPrompt * (t.completion_ratio ?? p.completion_ratio)),
        };
      });
  }
  return out;
}

/** The ratio column's lines beyond model, completion and group: cache reads and writes where set. */
export function cacheRatioLines(p: PricingEntry): string[] {
  const round = (n: number) => Math.round(n * 1e6) / 1e6;
  const lines: string[] = [];
  if (p.cache_ratio !== undefined) lines.push(`${tr('pricing.cacheReadColon')}${p.cache_ratio}`);
  if (p.create_cache_ratio !== undefined) {
    lines.push(`${tr('pricing.cacheWriteColon')}${p.create_cache_ratio}`);
    lines.push(`${tr('pricing.cacheWrite1hColon')}${round(p.create_cache_ratio * CACHE_1H_MULTIPLIER)}`);
  }
  return lines;
}

/** 模型价格: the offered models with prices for the viewer's group and a group-ratio banner. */
export default function PricingPage() {
  const t = useT();
  const { user } = useUser();
  const [rows, setRows] = useState<PricingEntry[]>([]);
  const [ratios, setRatios] = useState<Record<string, number>>({});
  const [loading, setLoading] = useState(true);
  const [filter, setFilter] = useState('');
  const group = user?.group || 'default';
  const groupRatio = ratios[group] ?? 1;

  useEffect(() => {
    void getPricing().then((res) => {
      setLoading(false);
      if (res.success) {
        setRows(res.data ?? []);
        setRatios(res.group_ratio ?? {});
      }
    });
  }, []);

  const shown = useMemo(
    () => rows.filter((r) => r.model_name.toLowerCase().includes(filter.trim().toLowerCase())),
    [rows, filter],
  );

  const columns: TableColumnProps<PricingEntry>[] = [
    {
      title: tr('common.modelName'),
      dataIndex: 'model_name',
      render: (name: string) => (
        <Tooltip content={tr('pricing.clickToCopy')}>
          <Tag style={{ cursor: 'pointer' }} onClick={() => void copyText(name)}>
            {name}
          </Tag>
        </Tooltip>
      ),
    },
    {
      title: tr('pricing.billing'),
      dataIndex: 'quota_type',
      render: (q: number) =>
        q === 1 ? (
          <Tag color="arcoblue">{tr('pricing.perRequest')}</Tag>
        ) : (
          <Tag color="green">{tr('pricing.perToken')}</Tag>
        ),
    },
    {
      title: tr('pricing.groups'),
      dataIndex: 'enable_groups',
      render: (gs: string[]) => (
        <Space wrap size={4}>
          {gs.map((g) => (
            <Tag key={g} color={g === group ? 'green' : undefined}>
              {g}
            </Tag>
          ))}
        </Space>
      ),
    },
    {
      title: tr('pricing.ratio'),
      render: (_v, p) =>
        p.quota_type === 1 ? (
          '-'
        ) : (
          <span>
            {tr('pricing.modelColon')}
            {p.model_ratio}
            <br />
            {tr('pricing.completionColon')}
            {p.completion_ratio}
            <br />
            {tr('pricing.groupColon')}
            {groupRatio}
            {cacheRatioLines(p).map((line) => (
              <span key={line}>
                <br />
                {line}
              </span>
            ))}
          </span>
        ),
    },
    {
      title: tr('common.modelPrice'),
      render: (_v, p) => {
        const price = priceOf(p, groupRatio);
        if (price.perCall) return <span>{tr('pricing.perCallPrice', { price: price.perCall })}</span>;
        return (
          <span>
            {tr('pricing.promptPrice', { price: price.prompt ?? '' })}
            <br />
            {tr('pricing.completionPrice', { price: price.completion ?? '' })}
            {price.audioPrompt ? (
              <>
                <br />
                {tr('pricing.audioPromptPrice', { price: price.audioPrompt })}
                <br />
                {tr('pricing.audioCompletionPrice', { price: price.audioCompletion ?? '' })}
              </>
            ) : null}
            {price.cacheRead ? (
              <>
                <br />
                {tr('pricing.cacheReadPrice', { price: price.cacheRead })}
              </>
            ) : null}
            {price.cacheWrite ? (
              <>
                <br />
                {tr('pricing.cacheWritePrice', { price: price.cacheWrite })}
                <br />
                {tr('pricing.cacheWrite1hPrice', { price: price.cacheWrite1h ?? '' })}
              </>
            ) : null}
            {price.tiers?.map((tier) => (
              <span key={tier.above}>
                <br />
                {tr('pricing.tierPrice', { above: tier.above, prompt: tier.prompt, completion: tier.completion })}
              </span>
            ))}
          </span>
        );
      },
    },
  ];

  return (
    <Card bordered={false} title={t('menu.pricing')}>
      <Alert
        type="success"
        style={{ marginBottom: 16 }}
        content={
          user
            ? tr('pricing.yourGroup', { group, ratio: groupRatio })
            : tr('pricing.anonymousGroup', { ratio: ratios.default ?? 1 })
        }
      />
      <Input
        prefix={<IconSearch />}
        placeholder={tr('pricing.searchModelNames')}
        value={filter}
        onChange={setFilter}
        allowClear
        style={{ width: 320, marginBottom: 16 }}
        onPressEnter={() => filter && Message.info(tr('pricing.nModels', { n: shown.length }))}
      />
      <Table
        rowKey="model_name"
        loading={loading}
        columns={columns}
        data={shown}
        pagination={{ pageSize: 20, showTotal: true }}
      />
    </Card>
  );
}
