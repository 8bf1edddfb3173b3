import { Alert, Card, Input, Message, Space, Table, type TableColumnProps, Tag, Tooltip } from '@arco-design/web-react';
import { IconSearch } from '@arco-design/web-react/icon';
import { useEffect, useMemo, useState } from 'react';
import { getPricing, type PricingEntry } from '../../api/pricing.ts';
import { useT } from '../../locale/index.tsx';
import { tr } from '../../locale/translate.ts';
import { useUser } from '../../store/user-context.tsx';
import { copyText } from '../../utils/clipboard.ts';

/**
 * Prices per 1M tokens (spec 02 section 9): prompt = model ratio x 2 x group ratio dollars,
 * completion = that x completion ratio; per-call = model price x group ratio.
 */
export function priceOf(
  p: PricingEntry,
  groupRatio: number,
): { prompt?: string; completion?: string; perCall?: string; audioPrompt?: string; audioCompletion?: string } {
  if (p.quota_type === 1) return { perCall: `$${(p.model_price * groupRatio).toFixed(4)}` };
  const prompt = p.model_ratio * 2 * groupRatio;
  const text = { prompt: `$${prompt.toFixed(4)}`, completion: `$${(prompt * p.completion_ratio).toFixed(4)}` };
  // Audio ratios apply likewise (spec 01 section 9): audio input = text input x audio ratio,
  // audio output = audio input x audio completion ratio.
  if (!p.audio_ratio || p.audio_ratio <= 0) return text;
  const audio = prompt * p.audio_ratio;
  return {
    ...text,
    audioPrompt: `$${audio.toFixed(4)}`,
    audioCompletion: `$${(audio * (p.audio_completion_ratio ?? 1)).toFixed(4)}`,
  };
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
