import { Space, type TableColumnProps, Tag, Typography } from '@arco-design/web-react';
import { type LogEntry, parseOther } from '../../api/log.ts';
import type { Status } from '../../api/types.ts';
import { serverText } from '../../locale/server-messages.ts';
import { tr } from '../../locale/translate.ts';
import { renderQuota } from '../../utils/format.ts';
import { CutTag, CutText } from './cut-text.tsx';
import { frtColor, logTypeTag, timeColor } from './log-rules.ts';

const pad = (n: number) => String(n).padStart(2, '0');
/** YYYY-MM-DD HH:mm:ss in local time. */
const timeText = (sec: number) => {
  const d = new Date(sec * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};

/** Consumption (2) and error (5) logs name a channel and carry times. */
const relayed = (r: LogEntry) => r.type === 2 || r.type === 5;

interface ColumnContext {
  admin: boolean;
  mobile: boolean;
  status: Status;
  /** Opens the summary of the log's user (admins click a username). */
  onUser: (id: number) => void;
}

/** The channel and user columns an admin sees after the time. */
function adminWhoColumns({ onUser }: ColumnContext): TableColumnProps<LogEntry>[] {
  return [
    {
      title: tr('common.channel'),
      dataIndex: 'channel',
      width: 60,
      render: (v: number, r: LogEntry) => (relayed(r) ? <Tag color="arcoblue">{v}</Tag> : null),
    },
    {
      title: tr('log.user'),
      dataIndex: 'username',
      width: 88,
      render: (v: string, r: LogEntry) =>
        v ? (
          <Typography.Text className="aigw-log-user" onClick={() => onUser(r.user_id)}>
            <CutText text={v} />
          </Typography.Text>
        ) : null,
    },
  ];
}

/** The retries column an admin sees: the channels a request went through, when more than one. */
function adminRetryColumn({ mobile }: ColumnContext): TableColumnProps<LogEntry> {
  return {
    title: tr('log.retries'),
    dataIndex: 'other',
    key: 'retry',
    width: mobile ? 140 : 72,
    render: (v: string, r: LogEntry) => {
      const used = parseOther(v).admin_info?.use_channel ?? [];
      return relayed(r) && used.length > 1 ? tr('log.channelsUsedList', { list: used.join('->') }) : null;
    },
  };
}

/** Use time, first-token time (streams) and stream or not, for relayed logs. */
function TimesCell({ log, mobile }: { log: LogEntry; mobile: boolean }) {
  if (!relayed(log)) return null;
  const frt = (parseOther(log.other).frt ?? 0) / 1000;
  return (
    <Space size={4} wrap={!mobile} className="aigw-log-times">
      <Tag color={timeColor(log.use_time)}>{log.use_time} s</Tag>
      {log.is_stream && frt > 0 ? <Tag color={frtColor(frt)}>{frt.toFixed(1)} s</Tag> : null}
      <Tag color={log.is_stream ? 'blue' : 'purple'}>{log.is_stream ? tr('log.stream') : tr('log.nonStream')}</Tag>
    </Space>
  );
}

/** The log table's columns (spec 02): the admin's channel, user and retries columns only for admins. */
export function logColumns(ctx: ColumnContext): TableColumnProps<LogEntry>[] {
  const { admin, mobile, status } = ctx;
  return [
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
    ...(admin ? adminWhoColumns(ctx) : []),
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
      render: (_v: number, r: LogEntry) => <TimesCell log={r} mobile={mobile} />,
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
    ...(admin ? [adminRetryColumn(ctx)] : []),
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
}
