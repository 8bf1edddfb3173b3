import { Alert, Card, Input, Message, Space, Table, type TableColumnProps, Tag, Tooltip } from '@arco-design/web-react';
import { IconSearch } from '@arco-design/web-react/icon';
import { useEffect, useMemo, useState } from 'react';
import { getPricing, type PricingEntry } from '../../api/pricing.ts';
import { useT } from '../../locale/index.tsx';
import { useUser } from '../../store/user-context.tsx';
import { copyText } from '../../utils/clipboard.ts';

/**
 * Prices per 1M tokens (spec 02 section 9): prompt = model ratio x 2 x group ratio dollars,
 * completion = that x completion ratio; per-call = model price x group ratio.
 */
export function priceOf(
  p: PricingEntry,
  groupRatio: number,
): { prompt?: string; completion?: string; perCall?: string } {
  if (p.quota_type === 1) return { perCall: `$${(p.model_price * groupRatio).toFixed(4)}` };
  const prompt = p.model_ratio * 2 * groupRatio;
  return { prompt: `$${prompt.toFixed(4)}`, completion: `$${(prompt * p.completion_ratio).toFixed(4)}` };
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
      title: '模型名称',
      dataIndex: 'model_name',
      render: (name: string) => (
        <Tooltip content="点击复制">
          <Tag style={{ cursor: 'pointer' }} onClick={() => void copyText(name)}>
            {name}
          </Tag>
        </Tooltip>
      ),
    },
    {
      title: '计费类型',
      dataIndex: 'quota_type',
      render: (q: number) => (q === 1 ? <Tag color="arcoblue">按次计费</Tag> : <Tag color="green">按量计费</Tag>),
    },
    {
      title: '可用分组',
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
      title: '倍率',
      render: (_v, p) =>
        p.quota_type === 1 ? (
          '-'
        ) : (
          <span>
            模型：{p.model_ratio}
            <br />
            补全：{p.completion_ratio}
            <br />
            分组：{groupRatio}
          </span>
        ),
    },
    {
      title: '模型价格',
      render: (_v, p) => {
        const price = priceOf(p, groupRatio);
        if (price.perCall) return <span>模型价格：{price.perCall} / 次</span>;
        return (
          <span>
            提示 {price.prompt} / 1M tokens
            <br />
            补全 {price.completion} / 1M tokens
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
            ? `您的分组为：${group}，分组倍率为：${groupRatio}`
            : `未登录，展示默认分组（default）的价格，分组倍率为：${ratios.default ?? 1}`
        }
      />
      <Input
        prefix={<IconSearch />}
        placeholder="模糊搜索模型名称"
        value={filter}
        onChange={setFilter}
        allowClear
        style={{ width: 320, marginBottom: 16 }}
        onPressEnter={() => filter && Message.info(`共 ${shown.length} 个模型`)}
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
