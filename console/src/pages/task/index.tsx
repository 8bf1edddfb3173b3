import {
  Button,
  Card,
  DatePicker,
  Form,
  Input,
  Modal,
  Space,
  Table,
  type TableColumnProps,
  Tag,
  Typography,
} from '@arco-design/web-react';
import { IconSearch } from '@arco-design/web-react/icon';
import { useState } from 'react';
import { type AsyncTask, listTasks, type TaskFilters } from '../../api/task.ts';
import { usePagedList } from '../../hooks/use-paged-list.ts';
import { useIsMobile } from '../../layout/use-mobile.ts';
import { useT } from '../../locale/index.tsx';
import { serverText } from '../../locale/server-messages.ts';
import { isAdmin } from '../../store/roles.ts';
import { useUser } from '../../store/user-context.tsx';
import { secondsRange } from '../../utils/seconds-range.ts';
import { pageSizeOf, savePageSize } from '../log/log-rules.ts';
import { defaultTaskRange, mediaOf, platformTag, taskActionTag, taskDuration, taskStatusTag } from './task-rules.ts';
import './style/index.css';

const pad = (n: number) => String(n).padStart(2, '0');
/** YYYY-MM-DD HH:mm:ss in local time, from seconds. */
const timeText = (sec: number) => {
  const d = new Date(sec * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};

interface FilterForm {
  task_id: string;
  channel_id: string;
  /** Seconds; empty: no bound. */
  range: [number, number] | undefined;
}

/** The API filters of a search (the channel filter only for an admin). */
function filtersOf(f: FilterForm, admin: boolean): TaskFilters {
  return {
    task_id: (f.task_id ?? '').trim(),
    ...(f.range ? { start_timestamp: f.range[0], end_timestamp: f.range[1] } : {}),
    ...(admin ? { channel_id: (f.channel_id ?? '').trim() } : {}),
  };
}

/** 异步任务: music tasks (spec 02): filters, a paged table, result pop-ups that play the media. */
export default function TaskPage() {
  const mobile = useIsMobile();
  const t = useT();
  const { user } = useUser();
  const admin = isAdmin(user);
  const [initialForm] = useState<FilterForm>(() => ({ task_id: '', channel_id: '', range: defaultTaskRange() }));
  const list = usePagedList<AsyncTask, FilterForm>({
    initialQuery: initialForm,
    initialPageSize: pageSizeOf,
    onPageSizeChange: savePageSize,
    fetch: (q, page, pageSize) => listTasks(admin, filtersOf(q, admin), page, pageSize),
    deps: [admin],
  });
  const [detail, setDetail] = useState<AsyncTask | undefined>();

  const columns: TableColumnProps<AsyncTask>[] = [
    {
      title: t('task.submitTime'),
      dataIndex: 'submit_time',
      width: 170,
      render: (v: number) => (v ? timeText(v) : ''),
    },
    {
      title: t('task.finishTime'),
      dataIndex: 'finish_time',
      width: 170,
      render: (v: number) => (v ? timeText(v) : t('common.none')),
    },
    {
      title: t('task.duration'),
      dataIndex: 'progress',
      key: 'duration',
      width: 100,
      render: (_v: string, r: AsyncTask) => {
        const d = taskDuration(r.submit_time, r.finish_time);
        return d ? <Tag color="green">{t('common.seconds', { n: d })}</Tag> : t('common.none');
      },
    },
    ...(admin
      ? [
          {
            title: t('common.channel'),
            dataIndex: 'channel_id',
            width: 70,
            render: (v: number) => <Tag color="arcoblue">{v}</Tag>,
          },
        ]
      : []),
    { title: t('task.platform'), dataIndex: 'platform', width: 80, render: (v: string) => platformTag(v) },
    { title: t('common.type'), dataIndex: 'action', width: 100, render: (v: string) => taskActionTag(v) },
    {
      title: t('task.taskId'),
      dataIndex: 'task_id',
      render: (v: string) => <Typography.Text copyable>{v}</Typography.Text>,
    },
    { title: t('task.taskStatus'), dataIndex: 'status', width: 100, render: (v: string) => taskStatusTag(v) },
    { title: t('task.progress'), dataIndex: 'progress', width: 80 },
    {
      title: t('task.details'),
      dataIndex: 'data',
      render: (_v: string, r: AsyncTask) => (
        <Button size="mini" onClick={() => setDetail(r)}>
          {t('common.view')}
        </Button>
      ),
    },
    {
      title: t('task.failureReason'),
      dataIndex: 'fail_reason',
      render: (v: string) => (v ? <Typography.Text type="error">{serverText(v)}</Typography.Text> : t('common.none')),
    },
  ];

  const media = mediaOf(detail?.data);
  return (
    <Card className="aigw-task" title={t('menu.task')}>
      <Form
        layout={mobile ? 'vertical' : 'inline'}
        className="aigw-task-filters"
        initialValues={initialForm}
        onSubmit={(v: Partial<FilterForm>) => list.search({ ...initialForm, ...v })}
      >
        <Form.Item label={t('task.taskId2')} field="task_id">
          <Input name="task_id" allowClear />
        </Form.Item>
        {admin ? (
          <Form.Item label={t('common.channelId')} field="channel_id">
            <Input name="channel_id" allowClear />
          </Form.Item>
        ) : null}
        <Form.Item
          label={t('common.timeRange')}
          field="range"
          // Seconds in the form, milliseconds in the picker.
          {...secondsRange}
        >
          <DatePicker.RangePicker
            showTime
            // A phone shows both ends whole without the year and the seconds (as the log page).
            format={mobile ? 'MM-DD HH:mm' : 'YYYY-MM-DD HH:mm:ss'}
          />
        </Form.Item>
        <Form.Item>
          <Button type="primary" htmlType="submit" icon={<IconSearch />}>
            {t('common.search')}
          </Button>
        </Form.Item>
      </Form>
      <Table
        rowKey="id"
        loading={list.loading}
        columns={columns}
        data={list.rows}
        scroll={{ x: true }}
        pagination={list.pagination}
      />
      <Modal
        title={t('task.taskDetails')}
        visible={!!detail}
        footer={null}
        onCancel={() => setDetail(undefined)}
        style={{ width: 720 }}
      >
        <Space direction="vertical" style={{ width: '100%' }}>
          {media.audio.map((src) => (
            // biome-ignore lint/a11y/useMediaCaption: generated music has no captions
            <audio key={src} controls src={src} style={{ width: '100%' }} />
          ))}
          {media.video.map((src) => (
            // biome-ignore lint/a11y/useMediaCaption: generated videos have no captions
            <video key={src} controls src={src} style={{ width: '100%' }} />
          ))}
          {media.text ? <Typography.Paragraph className="aigw-task-detail">{media.text}</Typography.Paragraph> : null}
          <Typography.Paragraph className="aigw-task-detail" copyable>
            {detail?.data || t('common.none')}
          </Typography.Paragraph>
        </Space>
      </Modal>
    </Card>
  );
}
