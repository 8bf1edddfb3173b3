import {
  Button,
  Card,
  DatePicker,
  Descriptions,
  Form,
  Input,
  Modal,
  Select,
  Space,
  Spin,
  Table,
  type TableColumnProps,
  Tag,
  Tooltip,
  Typography,
} from '@arco-design/web-react';
import { IconDownload, IconSearch } from '@arco-design/web-react/icon';
import { useCallback, useEffect, useMemo, useState } from 'react';
import {
  exportLogs,
  type LogEntry,
  type LogFilters,
  type LogStat,
  listLogs,
  logStat,
  parseOther,
  userSummary,
} from '../../api/log.ts';
import type { User } from '../../api/types.ts';
import { usePagedList } from '../../hooks/use-paged-list.ts';
import { useIsMobile } from '../../layout/use-mobile.ts';
import { serverText } from '../../locale/server-messages.ts';
import { isAdmin } from '../../store/roles.ts';
import { useStatus } from '../../store/status-context.tsx';
import { useUser } from '../../store/user-context.tsx';
import { renderQuota } from '../../utils/format.ts';
import { secondsRange } from '../../utils/seconds-range.ts';
import {
  cacheAndTierLines,
  frtColor,
  logTypeOptions,
  logTypeTag,
  pageSizeOf,
  savePageSize,
  timeColor,
  todayStart,
} from './log-rules.ts';
import './style/index.css';
import { tr } from '../../locale/translate.ts';

const pad = (n: number) => String(n).padStart(2, '0');
/** YYYY-MM-DD HH:mm:ss in local time. */
const timeText = (sec: number) => {
  const d = new Date(sec * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};

/** The filter fields; range in Unix seconds. */
interface FilterForm {
  token_name: string;
  model_name: string;
  username: string;
  channel: string;
  range: [number, number];
  type: number;
}

/** The API filters of a search (the user and channel filters only for an admin). */
function filtersOf(f: FilterForm, admin: boolean): LogFilters {
  return {
    type: f.type,
    token_name: f.token_name.trim(),
    model_name: f.model_name.trim(),
    start_timestamp: f.range[0],
    end_timestamp: f.range[1],
    ...(admin ? { username: f.username.trim(), channel: f.channel.trim() } : {}),
  };
}

/** 日志: totals, filters, a type selector and a paged table with expandable rows (spec 02). */
export default function LogPage() {
  const { user } = useUser();
  const { status } = useStatus();
  const admin = isAdmin(user);
  // On a phone the filters stack, each field as wide as the screen (the time range fits whole).
  const mobile = useIsMobile();
  const [initialForm] = useState<FilterForm>(() => ({
    token_name: '',
    model_name: '',
    username: '',
    channel: '',
    range: [todayStart(), Math.floor(Date.now() / 1000) + 3600],
    type: 0,
  }));
  const list = usePagedList<LogEntry, FilterForm>({
    initialQuery: initialForm,
    initialPageSize: pageSizeOf,
    onPageSizeChange: savePageSize,
    fetch: (q, page, pageSize) => listLogs(admin, filtersOf(q, admin), page, pageSize),
    deps: [admin],
  });
  const { rows } = list;
  const [stat, setStat] = useState<LogStat>({ quota: 0, rpm: 0, tpm: 0 });
  const [statLoading, setStatLoading] = useState(false);
  const [summary, setSummary] = useState<{ visible: boolean; user?: User; loading: boolean }>({
    visible: false,
    loading: false,
  });

  const filters = useMemo(() => filtersOf(list.query, admin), [list.query, admin]);

  const loadStat = useCallback(async () => {
    setStatLoading(true);
    const res = await logStat(admin, filters);
    setStatLoading(false);
    if (res.success && res.data) setStat(res.data);
  }, [admin, filters]);

  useEffect(() => {
    void loadStat();
  }, [loadStat]);

  // The CSV of what the table lists (the filters last searched), saved under the server's name.
  const [exporting, setExporting] = useState(false);
  const download = async () => {
    setExporting(true);
    const res = await exportLogs(admin, filters);
    setExporting(false);
    if (!('blob' in res)) return;
    const url = URL.createObjectURL(res.blob);
    const a = document.createElement('a');
    a.href = url;
    a.download = res.name;
    a.click();
    // Revoked once the browser has taken the file.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };

  const openSummary = async (id: number) => {
    setSummary({ visible: true, loading: true });
    const res = await userSummary(id);
    setSummary({ visible: true, loading: false, ...(res.success && res.data ? { user: res.data } : {}) });
  };

  const columns: TableColumnProps<LogEntry>[] = [
    {
      title: tr('log.time'),
      dataIndex: 'created_at',
      // Date over time: two short lines leave the width to the details.
      width: mobile ? 170 : 100,
      render: (v: number) => {
        const [date, time] = timeText(v).split(' ');
        return (
          <span className="aigw-log-time">
            <span>{date}</span> <span>{time}</span>
          </span>
        );
      },
    },
    ...(admin
      ? [
          {
            title: tr('common.channel'),
            dataIndex: 'channel',
            width: 60,
            render: (v: number, r: LogEntry) => (r.type === 2 || r.type === 5 ? <Tag color="arcoblue">{v}</Tag> : null),
          },
          {
            title: tr('log.user'),
            dataIndex: 'username',
            width: 88,
            render: (v: string, r: LogEntry) =>
              v ? (
                <Typography.Text className="aigw-log-user" onClick={() => void openSummary(r.user_id)}>
                  <CutText text={v} />
                </Typography.Text>
              ) : null,
          },
        ]
      : []),
    {
      title: tr('log.token'),
      dataIndex: 'token_name',
      width: 84,
      render: (v: string) => (v ? <CutTag text={v} color="gray" /> : null),
    },
    { title: tr('common.type'), dataIndex: 'type', width: 64, render: (v: number) => logTypeTag(v) },
    {
      title: tr('common.model'),
      dataIndex: 'model_name',
      width: 124,
      render: (v: string) => (v ? <CutTag text={v} color="arcoblue" /> : null),
    },
    {
      title: tr('log.timeFirstToken'),
      dataIndex: 'use_time',
      width: mobile ? 170 : 100,
      render: (v: number, r: LogEntry) => {
        if (r.type !== 2 && r.type !== 5) return null;
        const other = parseOther(r.other);
        const frt = (other.frt ?? 0) / 1000;
        return (
          <Space size={4} wrap={!mobile} className="aigw-log-times">
            <Tag color={timeColor(v)}>{v} s</Tag>
            {r.is_stream && frt > 0 ? <Tag color={frtColor(frt)}>{frt.toFixed(1)} s</Tag> : null}
            <Tag color={r.is_stream ? 'blue' : 'purple'}>{r.is_stream ? tr('log.stream') : tr('log.nonStream')}</Tag>
          </Space>
        );
      },
    },
    {
      title: tr('log.prompt'),
      dataIndex: 'prompt_tokens',
      width: 60,
      render: (v: number, r: LogEntry) => (r.type === 2 ? v : null),
    },
    {
      title: tr('log.completion'),
      dataIndex: 'completion_tokens',
      width: 60,
      render: (v: number, r: LogEntry) => (r.type === 2 ? v : null),
    },
    {
      title: tr('log.cost'),
      dataIndex: 'quota',
      width: 92,
      render: (v: number, r: LogEntry) =>
        r.type === 2 || r.type === 1 || r.type === 3 ? (
          <span className="aigw-nowrap aigw-log-cost">{renderQuota(v, status, 6)}</span>
        ) : null,
    },
    ...(admin
      ? [
          {
            title: tr('log.retries'),
            dataIndex: 'other',
            key: 'retry',
            width: mobile ? 140 : 72,
            render: (v: string, r: LogEntry) => {
              const used = parseOther(v).admin_info?.use_channel ?? [];
              return (r.type === 2 || r.type === 5) && used.length > 1
                ? tr('log.channelsUsedList', { list: used.join('->') })
                : null;
            },
          },
        ]
      : []),
    {
      title: tr('log.details'),
      dataIndex: 'content',
      // Holds the rest of the row (at 1440 px about twenty characters and more); on a phone the
      // table scrolls sideways.
      ...(mobile ? { width: 280 } : {}),
      className: 'aigw-log-content',
      render: (v: string) => (
        <Typography.Ellipsis rows={2} showTooltip>
          {serverText(v ?? '')}
        </Typography.Ellipsis>
      ),
    },
  ];

  return (
    <Card
      className="aigw-log"
      title={
        <Space size="large" wrap className="aigw-log-stat">
          <span>
            {tr('log.quotaUsed')}
            <b>{statLoading ? '…' : renderQuota(stat.quota, status)}</b>
          </span>
          <span>
            {tr('log.rpm')}
            <b>{stat.rpm}</b>
          </span>
          <span>
            {tr('log.tpm')}
            <b>{stat.tpm}</b>
          </span>
        </Space>
      }
    >
      <Form
        layout={mobile ? 'vertical' : 'inline'}
        className="aigw-log-filters"
        initialValues={initialForm}
        onSubmit={(v: Partial<FilterForm>) => list.search({ ...initialForm, ...v })}
      >
        <Form.Item label={tr('log.tokenName')} field="token_name" normalize={(v?: string) => v ?? ''}>
          <Input name="token_name" allowClear />
        </Form.Item>
        <Form.Item label={tr('common.modelName')} field="model_name" normalize={(v?: string) => v ?? ''}>
          <Input name="model_name" allowClear />
        </Form.Item>
        <Form.Item
          label={tr('common.timeRange')}
          field="range"
          // Seconds in the form, milliseconds in the picker; clearing keeps the last range.
          {...secondsRange}
          normalize={(v?: [number, number], prev?: [number, number]) => v ?? prev}
        >
          <DatePicker.RangePicker
            showTime
            // A phone shows both ends whole without the year and the seconds.
            format={mobile ? 'MM-DD HH:mm' : 'YYYY-MM-DD HH:mm:ss'}
          />
        </Form.Item>
        {admin ? (
          <>
            <Form.Item label={tr('common.username')} field="username" normalize={(v?: string) => v ?? ''}>
              <Input name="username" allowClear />
            </Form.Item>
            <Form.Item label={tr('common.channelId')} field="channel" normalize={(v?: string) => v ?? ''}>
              <Input name="channel" allowClear />
            </Form.Item>
          </>
        ) : null}
        <Form.Item label={tr('log.logType')} field="type">
          <Select style={{ width: 120 }} options={logTypeOptions()} />
        </Form.Item>
        <Form.Item>
          <Button type="primary" htmlType="submit" icon={<IconSearch />}>
            {tr('common.search')}
          </Button>
        </Form.Item>
        <Form.Item>
          <Button icon={<IconDownload />} loading={exporting} onClick={() => void download()}>
            {tr('log.export')}
          </Button>
        </Form.Item>
      </Form>
      <Table
        rowKey="id"
        loading={list.loading}
        columns={columns}
        data={rows}
        className="aigw-log-table"
        // The fixed widths plus 200 px of details: at 1440 px the whole row fits, cost and details
        // included; narrower screens scroll sideways.
        scroll={{ x: columns.reduce((sum, c) => sum + Number(c.width ?? 0), 40 + (mobile ? 0 : 200)) }}
        expandedRowRender={(r) => <LogDetails log={r} admin={admin} />}
        pagination={list.pagination}
      />
      <Modal
        title={tr('log.userInfo')}
        visible={summary.visible}
        footer={null}
        onCancel={() => setSummary({ visible: false, loading: false })}
      >
        <Spin loading={summary.loading} style={{ width: '100%' }}>
          {summary.user ? (
            <Descriptions
              column={1}
              data={[
                { label: tr('common.username2'), value: summary.user.username },
                { label: tr('log.balance'), value: renderQuota(summary.user.quota ?? 0, status) },
                { label: tr('common.usedQuota'), value: renderQuota(summary.user.used_quota ?? 0, status) },
                { label: tr('common.requests'), value: String(summary.user.request_count ?? 0) },
              ]}
            />
          ) : null}
        </Spin>
      </Modal>
    </Card>
  );
}

/** A name cut to its cell with an ellipsis, whole in a tooltip. */
function CutText({ text }: { text: string }) {
  return (
    <Tooltip content={text}>
      <span className="aigw-cut">{text}</span>
    </Tooltip>
  );
}

/** A tag whose text is cut to the cell, whole in a tooltip (long model and token names). */
function CutTag({ text, color }: { text: string; color: string }) {
  return (
    <Tooltip content={text}>
      <Tag color={color} className="aigw-cut-tag">
        {text}
      </Tag>
    </Tooltip>
  );
}

/** The expanded row: the log's other details. */
function LogDetails({ log, admin }: { log: LogEntry; admin: boolean }) {
  const other = parseOther(log.other);
  const data: { label: string; value: string }[] = [];
  if (log.content) data.push({ label: tr('log.details'), value: serverText(log.content) });
  if (other.model_price !== undefined && other.model_price >= 0)
    data.push({ label: tr('common.modelPrice'), value: String(other.model_price) });
  else if (other.model_ratio !== undefined)
    data.push({ label: tr('log.modelRatio'), value: String(other.model_ratio) });
  if (other.completion_ratio !== undefined && !(other.model_price !== undefined && other.model_price >= 0))
    data.push({ label: tr('log.completionRatio'), value: String(other.completion_ratio) });
  if (other.group_ratio !== undefined) data.push({ label: tr('log.groupRatio'), value: String(other.group_ratio) });
  if (other.frt) data.push({ label: tr('log.firstTokenTime'), value: `${(other.frt / 1000).toFixed(2)} s` });
  if (other.upstream_model_name) data.push({ label: tr('log.actualModel'), value: other.upstream_model_name });
  // Cache reads, writes by lifetime and the long-context tier, each with the ratio applied.
  data.push(...cacheAndTierLines(other));
  if (other.image_tokens) data.push({ label: tr('log.imageInputTokens'), value: String(other.image_tokens) });
  if (other.image_ratio) data.push({ label: tr('log.imageRatio'), value: String(other.image_ratio) });
  if (other.audio) {
    data.push({ label: tr('log.textInputOutput'), value: `${other.text_input ?? 0} / ${other.text_output ?? 0}` });
    data.push({ label: tr('log.audioInputOutput'), value: `${other.audio_input ?? 0} / ${other.audio_output ?? 0}` });
    if (other.audio_ratio) data.push({ label: tr('log.audioRatio'), value: String(other.audio_ratio) });
    if (other.audio_completion_ratio)
      data.push({ label: tr('log.audioCompletionRatio'), value: String(other.audio_completion_ratio) });
  }
  if (other.error)
    data.push({ label: tr('log.error'), value: `${other.status_code ?? ''} ${serverText(other.error)}` });
  if (admin && other.admin_info?.use_channel?.length)
    data.push({ label: tr('log.channelsUsed'), value: other.admin_info.use_channel.join(' -> ') });
  if (log.group) data.push({ label: tr('common.group'), value: log.group });
  if (data.length === 0) return <Typography.Text type="secondary">{tr('common.none')}</Typography.Text>;
  return (
    <div className="aigw-log-details">
      {data.map((d) => (
        <div key={d.label}>
          <Typography.Text type="secondary">
            {d.label}
            {tr('common.colon')}
          </Typography.Text>
          <Typography.Text>{d.value}</Typography.Text>
        </div>
      ))}
    </div>
  );
}
