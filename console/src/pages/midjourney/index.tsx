import {
  Button,
  Card,
  DatePicker,
  Form,
  Image,
  Input,
  Modal,
  Progress,
  Table,
  type TableColumnProps,
  Tag,
  Typography,
} from '@arco-design/web-react';
import { IconSearch } from '@arco-design/web-react/icon';
import { useState } from 'react';
import { listMj, type MjFilters, type MjTask } from '../../api/task.ts';
import { usePagedList } from '../../hooks/use-paged-list.ts';
import { useIsMobile } from '../../layout/use-mobile.ts';
import { isAdmin } from '../../store/roles.ts';
import { useUser } from '../../store/user-context.tsx';
import { pageSizeOf, savePageSize } from '../log/log-rules.ts';
import { actionTag, codeTag, defaultDrawRange, duration, progressPercent, statusTag } from './mj-rules.ts';
import './style/index.css';
import { serverText } from '../../locale/server-messages.ts';
import { tr } from '../../locale/translate.ts';

const pad = (n: number) => String(n).padStart(2, '0');
/** YYYY-MM-DD HH:mm:ss in local time, from milliseconds. */
const timeText = (ms: number) => {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};

interface FilterForm {
  mj_id: string;
  channel_id: string;
  /** Milliseconds; empty: no bound. */
  range: [number, number] | undefined;
}

/** The API filters of a search (the channel filter only for an admin). */
function filtersOf(f: FilterForm, admin: boolean): MjFilters {
  return {
    mj_id: (f.mj_id ?? '').trim(),
    ...(f.range ? { start_timestamp: f.range[0], end_timestamp: f.range[1] } : {}),
    ...(admin ? { channel_id: (f.channel_id ?? '').trim() } : {}),
  };
}

/** 绘图: the drawing tasks of spec 02 (filters, paged table, image viewer, detail pop-ups). */
export default function MidjourneyPage() {
  const mobile = useIsMobile();
  const { user } = useUser();
  const admin = isAdmin(user);
  const [initialForm] = useState<FilterForm>(() => ({ mj_id: '', channel_id: '', range: defaultDrawRange() }));
  const list = usePagedList<MjTask, FilterForm>({
    initialQuery: initialForm,
    initialPageSize: pageSizeOf,
    onPageSizeChange: savePageSize,
    fetch: (q, page, pageSize) => listMj(admin, filtersOf(q, admin), page, pageSize),
    deps: [admin],
  });
  const [detail, setDetail] = useState<{ title: string; text: string } | undefined>();
  const [image, setImage] = useState<string | undefined>();

  const textCell = (title: string) => (v: string) =>
    v ? (
      <Typography.Text className="aigw-mj-text" onClick={() => setDetail({ title, text: v })}>
        <Typography.Ellipsis rows={1}>{v}</Typography.Ellipsis>
      </Typography.Text>
    ) : (
      tr('common.none')
    );

  const columns: TableColumnProps<MjTask>[] = [
    { title: tr('mj.submitted2'), dataIndex: 'submit_time', width: 170, render: (v: number) => (v ? timeText(v) : '') },
    {
      title: tr('mj.duration'),
      dataIndex: 'finish_time',
      width: 100,
      render: (_v: number, r: MjTask) => {
        const d = duration(r.submit_time, r.finish_time);
        return d ? (
          <Tag color={d.red ? 'red' : 'green'}>{tr('common.seconds', { n: d.seconds })}</Tag>
        ) : (
          tr('common.none')
        );
      },
    },
    ...(admin
      ? [
          {
            title: tr('common.channel'),
            dataIndex: 'channel_id',
            width: 70,
            render: (v: number) => <Tag color="arcoblue">{v}</Tag>,
          },
        ]
      : []),
    { title: tr('common.type'), dataIndex: 'action', width: 100, render: (v: string) => actionTag(v) },
    {
      title: tr('mj.taskId'),
      dataIndex: 'mj_id',
      render: (v: string) => (
        <Typography.Text copyable className="aigw-mj-id">
          {v}
        </Typography.Text>
      ),
    },
    { title: tr('mj.submission'), dataIndex: 'code', width: 100, render: (v: number) => codeTag(v) },
    { title: tr('mj.taskStatus'), dataIndex: 'status', width: 100, render: (v: string) => statusTag(v) },
    {
      title: tr('mj.progress'),
      dataIndex: 'progress',
      width: 120,
      render: (v: string, r: MjTask) => (
        <Progress
          size="small"
          percent={progressPercent(v)}
          status={r.status === 'FAILURE' ? 'error' : r.status === 'SUCCESS' ? 'success' : 'normal'}
        />
      ),
    },
    {
      title: tr('mj.image'),
      dataIndex: 'image_url',
      render: (v: string) =>
        v ? (
          <Button size="mini" onClick={() => setImage(v)}>
            {tr('mj.viewImage')}
          </Button>
        ) : (
          tr('common.none')
        ),
    },
    { title: 'Prompt', dataIndex: 'prompt', render: textCell('Prompt') },
    { title: 'PromptEn', dataIndex: 'prompt_en', render: textCell('PromptEn') },
    {
      title: tr('mj.failureReason'),
      dataIndex: 'fail_reason',
      render: (v: string) => textCell(tr('mj.failureReason'))(v && serverText(v)),
    },
  ];

  return (
    <Card className="aigw-mj" title={tr('mj.drawingLogs')}>
      <Form
        layout={mobile ? 'vertical' : 'inline'}
        className="aigw-mj-filters"
        initialValues={initialForm}
        onSubmit={(v: Partial<FilterForm>) => list.search({ ...initialForm, ...v })}
      >
        <Form.Item label={tr('mj.taskId2')} field="mj_id">
          <Input name="mj_id" allowClear />
        </Form.Item>
        {admin ? (
          <Form.Item label={tr('common.channelId')} field="channel_id">
            <Input name="channel_id" allowClear />
          </Form.Item>
        ) : null}
        <Form.Item
          label={tr('common.timeRange')}
          field="range"
          getValueFromEvent={(_s: string[], d?: { valueOf(): number }[]) =>
            (d?.[0] && d[1] ? [d[0].valueOf(), d[1].valueOf()] : undefined) as [number, number]
          }
        >
          <DatePicker.RangePicker
            showTime
            // A phone shows both ends whole without the year and the seconds (as the log page).
            format={mobile ? 'MM-DD HH:mm' : 'YYYY-MM-DD HH:mm:ss'}
          />
        </Form.Item>
        <Form.Item>
          <Button type="primary" htmlType="submit" icon={<IconSearch />}>
            {tr('common.search')}
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
      <Modal title={detail?.title} visible={!!detail} footer={null} onCancel={() => setDetail(undefined)}>
        <Typography.Paragraph className="aigw-mj-detail" copyable>
          {detail?.text}
        </Typography.Paragraph>
      </Modal>
      <Image.Preview src={image ?? ''} visible={!!image} onVisibleChange={(v) => !v && setImage(undefined)} />
    </Card>
  );
}
