import {
  Button,
  Card,
  DatePicker,
  Empty,
  Form,
  Grid,
  Input,
  Radio,
  Space,
  Spin,
  Statistic,
} from '@arco-design/web-react';
import { IconSearch } from '@arco-design/web-react/icon';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { dashboardData, type QuotaData } from '../../api/log.ts';
import { isAdmin } from '../../store/roles.ts';
import { useStatus } from '../../store/status-context.tsx';
import { useUser } from '../../store/user-context.tsx';
import { renderNumber, renderQuota, renderQuotaPrecise } from '../../utils/format.ts';
import { aggregate, type Granularity } from './aggregate.ts';
import DashboardPanels from './console-panels.tsx';
import StackedBars, { colorOf } from './stacked-bars.tsx';
import './style/index.css';
import { tr } from '../../locale/translate.ts';

const DAY = 86400;
const SPAN: Record<Granularity, number> = { hour: DAY, day: 7 * DAY, week: 28 * DAY };

function slotLabel(g: Granularity) {
  return (s: number) => {
    const d = new Date(s * 1000);
    const md = `${d.getMonth() + 1}-${d.getDate()}`;
    return g === 'hour' ? `${md} ${d.getHours()}:00` : md;
  };
}

/** 数据看板: quota, tokens and request counts over time, by model (hourly buckets). */
export default function DetailPage() {
  const { user } = useUser();
  const { status } = useStatus();
  const admin = isAdmin(user);
  const initial = (status.data_export_default_time as Granularity | undefined) ?? 'hour';
  const [granularity, setGranularity] = useState<Granularity>(
    ['hour', 'day', 'week'].includes(initial) ? initial : 'hour',
  );
  const now = Math.floor(Date.now() / 1000);
  const [range, setRange] = useState<[number, number]>([now - SPAN[granularity], now + 3600]);
  const [username, setUsername] = useState('');
  const [query, setQuery] = useState({ range, username });
  const [rows, setRows] = useState<QuotaData[]>([]);
  const [loading, setLoading] = useState(false);

  const load = useCallback(async () => {
    setLoading(true);
    const res = await dashboardData(admin, query.range[0], query.range[1], query.username.trim());
    setLoading(false);
    if (res.success) setRows(res.data ?? []);
  }, [admin, query]);

  useEffect(() => {
    void load();
  }, [load]);

  const series = useMemo(() => aggregate(rows, granularity), [rows, granularity]);
  const label = slotLabel(granularity);

  return (
    <>
      <Card title={tr('detail.dashboard')} className="aigw-detail">
        <Form layout="inline" onSubmit={() => setQuery({ range, username })}>
          <Form.Item label={tr('common.timeRange')}>
            <DatePicker.RangePicker
              showTime
              value={[range[0] * 1000, range[1] * 1000]}
              onChange={(_s, d) => {
                if (d?.[0] && d[1]) setRange([d[0].unix(), d[1].unix()]);
              }}
            />
          </Form.Item>
          {admin ? (
            <Form.Item label={tr('common.username')}>
              <Input
                name="username"
                value={username}
                onChange={setUsername}
                allowClear
                placeholder={tr('detail.allUsers')}
              />
            </Form.Item>
          ) : null}
          <Form.Item label={tr('detail.granularity')}>
            <Radio.Group type="button" value={granularity} onChange={(v: Granularity) => setGranularity(v)}>
              <Radio value="hour">{tr('detail.hour')}</Radio>
              <Radio value="day">{tr('detail.day')}</Radio>
              <Radio value="week">{tr('detail.week')}</Radio>
            </Radio.Group>
          </Form.Item>
          <Form.Item>
            <Button type="primary" htmlType="submit" icon={<IconSearch />}>
              {tr('common.search')}
            </Button>
          </Form.Item>
        </Form>
        <Spin loading={loading} style={{ width: '100%' }}>
          <Grid.Row gutter={16} className="aigw-detail-totals">
            <Grid.Col span={8}>
              <Statistic title={tr('detail.quotaUsed')} value={renderQuota(series.totals.quota, status)} />
            </Grid.Col>
            <Grid.Col span={8}>
              <Statistic title="Tokens" value={renderNumber(series.totals.token_used)} />
            </Grid.Col>
            <Grid.Col span={8}>
              <Statistic title={tr('common.requests')} value={series.totals.count} />
            </Grid.Col>
          </Grid.Row>
          {series.slots.length === 0 ? (
            <Empty description={tr('detail.noData')} />
          ) : (
            <>
              <Space wrap className="aigw-detail-legend">
                {series.models.map((m, i) => (
                  <span key={m}>
                    <i style={{ background: colorOf(i) }} />
                    {m}
                  </span>
                ))}
              </Space>
              <h4>{tr('detail.quotaUsed')}</h4>
              <StackedBars
                slots={series.slots}
                models={series.models}
                values={series.values.quota}
                label={label}
                format={(v) => renderQuotaPrecise(Math.round(v), status)}
                tick={(v, max) => renderQuotaPrecise(Math.round(v), status, max)}
              />
              <h4>Tokens</h4>
              <StackedBars
                slots={series.slots}
                models={series.models}
                values={series.values.token_used}
                label={label}
                format={(v) => renderNumber(Math.round(v))}
              />
              <h4>{tr('common.requests')}</h4>
              <StackedBars
                slots={series.slots}
                models={series.models}
                values={series.values.count}
                label={label}
                format={(v) => String(Math.round(v))}
              />
            </>
          )}
        </Spin>
      </Card>
      <DashboardPanels />
    </>
  );
}
