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
import { useCallback, useEffect, useMemo, useState } from 'react';
import { listMj, type MjFilters, type MjTask } from '../../api/task.ts';
import { useIsMobile } from '../../layout/use-mobile.ts';
import { isAdmin } from '../../store/roles.ts';
import { useUser } from '../../store/user-context.tsx';
import { pageSizeOf, savePageSize } from '../log/log-rules.ts';
import { actionTag, codeTag, defaultDrawRange, duration, progressPercent, statusTag } from './mj-rules.ts';
import './style/index.css';
import { serverText } from '../../locale/server-messages.ts';
import { tr } from '../../locale/translate.ts';

const PAGE_SIZES = [10, 20, 50, 100];
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

/** 绘图: the drawing tasks of spec 02 (filters, paged table, image viewer, detail pop-ups). */
export default function MidjourneyPage() {
  const mobile = useIsMobile();
  const { user } = useUser();
  const admin = isAdmin(user);
  const [form, setForm] = useState<FilterForm>(() => ({ mj_id: '', channel_id: '', range: defaultDrawRange() }));
  const [applied, setApplied] = useState<FilterForm>(form);
  const [rows, setRows] = useState<MjTask[]>([]);
  const [total, setTotal] = useState(0);
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(pageSizeOf);
  const [loading, setLoading] = useState(false);
  const [detail, setDetail] = useState<{ title: string; text: string } | undefined>();
  const [image, setImage] = useState<string | undefined>();

  const filters = useMemo<MjFilters>(
    () => ({
      mj_id: applied.mj_id.trim(),
      ...(applied.range ? { start_timestamp: applied.range[0], end_timestamp: applied.range[1] } : {}),
      ...(admin ? { channel_id: applied.channel_id.trim() } : {}),
    }),
    [applied, admin],
  );

  const load = useCallback(async () => {
    setLoading(true);
    const res = await listMj(admin, filters, page, pageSize);
    setLoading(false);
    if (res.success && res.data) {
      setRows(res.data.items);
      setTotal(res.data.total);
    }
  }, [admin, filters, page, pageSize]);

  useEffect(() => {
    void load();
  }, [load]);

  const search = () => {
    setPage(1);
    setApplied(form);
  };

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
      <Form layout={mobile ? 'vertical' : 'inline'} className="aigw-mj-filters" onSubmit={search}>
        <Form.Item label={tr('mj.taskId2')}>
          <Input name="mj_id" value={form.mj_id} onChange={(v) => setForm({ ...form, mj_id: v })} allowClear />
        </Form.Item>
        {admin ? (
          <Form.Item label={tr('common.channelId')}>
            <Input
              name="channel_id"
              value={form.channel_id}
              onChange={(v) => setForm({ ...form, channel_id: v })}
              allowClear
            />
          </Form.Item>
        ) : null}
        <Form.Item label={tr('common.timeRange')}>
          <DatePicker.RangePicker
            showTime
            // A phone shows both ends whole without the year and the seconds (as the log page).
            format={mobile ? 'MM-DD HH:mm' : 'YYYY-MM-DD HH:mm:ss'}
            value={form.range}
            onChange={(_s, d) => {
              setForm({ ...form, range: d?.[0] && d[1] ? [d[0].valueOf(), d[1].valueOf()] : undefined });
            }}
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
        loading={loading}
        columns={columns}
        data={rows}
        scroll={{ x: true }}
        pagination={{
          current: page,
          pageSize,
          total,
          showTotal: true,
          sizeCanChange: true,
          sizeOptions: PAGE_SIZES,
          onChange: (p, size) => {
            if (size !== pageSize) {
              savePageSize(size);
              setPageSize(size);
              setPage(1);
            } else setPage(p);
          },
        }}
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
