import { Button, Message, Modal, Popconfirm, Space, Table, type TableColumnProps, Tag } from '@arco-design/web-react';
import { useCallback, useEffect, useState } from 'react';
import { type KeyAction, type KeyStatus, type KeyStatusPage, keyStatuses, manageKey } from '../../api/channel.ts';
import { serverText } from '../../locale/server-messages.ts';
import { tr } from '../../locale/translate.ts';

const PAGE_SIZE = 10;
const timeText = (sec: number) => (sec ? new Date(sec * 1000).toLocaleString() : '');

function StatusTag({ status }: { status: number }) {
  if (status === 1) return <Tag color="green">{tr('common.enabled')}</Tag>;
  if (status === 2) return <Tag color="red">{tr('channelKeys.manualDisabled')}</Tag>;
  return <Tag color="orange">{tr('channelKeys.autoDisabled')}</Tag>;
}

/**
 * The keys of a multi-key channel (new-api's key management): status, last error and time of
 * each key (previews only, never the key), disable, enable or delete one key, enable all, delete
 * the automatically disabled ones. Every change is made by the server (multi_key/manage).
 */
export default function MultiKeyDialog({
  channelId,
  onClose,
}: {
  channelId: number | undefined;
  /** Called when the dialog closes; `changed` when a key was changed (the list reloads). */
  onClose: (changed: boolean) => void;
}) {
  const [data, setData] = useState<KeyStatusPage | undefined>();
  const [page, setPage] = useState(1);
  const [loading, setLoading] = useState(false);
  const [changed, setChanged] = useState(false);

  const load = useCallback(async () => {
    if (channelId === undefined) return;
    setLoading(true);
    const res = await keyStatuses(channelId, page, PAGE_SIZE);
    setLoading(false);
    if (res.success && res.data) setData(res.data);
  }, [channelId, page]);

  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    if (channelId === undefined) {
      setData(undefined);
      setPage(1);
      setChanged(false);
    }
  }, [channelId]);

  const act = async (action: KeyAction, index?: number) => {
    if (channelId === undefined) return;
    const res = await manageKey(channelId, action, index);
    if (!res.success) return;
    if (res.message) Message.success(res.message);
    setChanged(true);
    await load();
  };

  const columns: TableColumnProps<KeyStatus>[] = [
    { title: '#', dataIndex: 'index', width: 60, render: (i: number) => i + 1 },
    { title: tr('channelKeys.preview'), dataIndex: 'key_preview' },
    {
      title: tr('channelKeys.status'),
      dataIndex: 'status',
      width: 110,
      render: (s: number) => <StatusTag status={s} />,
    },
    {
      title: tr('channelKeys.reason'),
      render: (_v, k) =>
        k.status === 1
          ? ''
          : [k.reason && serverText(k.reason), timeText(k.disabled_time)].filter(Boolean).join(' · ') || '-',
    },
    {
      title: tr('common.actions'),
      width: 150,
      render: (_v, k) => (
        <Space size={4}>
          {k.status === 1 ? (
            <Button size="mini" status="warning" onClick={() => void act('disable_key', k.index)}>
              {tr('common.disable')}
            </Button>
          ) : (
            <Button size="mini" status="success" onClick={() => void act('enable_key', k.index)}>
              {tr('common.enable')}
            </Button>
          )}
          <Popconfirm title={tr('channelKeys.deleteKeyConfirm')} onOk={() => void act('delete_key', k.index)}>
            <Button size="mini" status="danger">
              {tr('common.delete')}
            </Button>
          </Popconfirm>
        </Space>
      ),
    },
  ];

  return (
    <Modal
      title={tr('channelKeys.manage')}
      visible={channelId !== undefined}
      footer={null}
      style={{ width: 760, maxWidth: '96vw' }}
      onCancel={() => onClose(changed)}
      unmountOnExit
    >
      {data && (
        <Space style={{ marginBottom: 12 }} wrap>
          <span>
            {tr('channelKeys.counts', {
              enabled: data.enabled_count,
              manual: data.manual_disabled_count,
              auto: data.auto_disabled_count,
            })}
          </span>
          <Button size="small" onClick={() => void act('enable_all_keys')}>
            {tr('channelKeys.enableAll')}
          </Button>
          <Button size="small" status="danger" onClick={() => void act('delete_disabled_keys')}>
            {tr('channelKeys.deleteAutoDisabled')}
          </Button>
        </Space>
      )}
      <Table
        rowKey="index"
        size="small"
        loading={loading}
        columns={columns}
        data={data?.keys ?? []}
        pagination={{ current: page, pageSize: PAGE_SIZE, total: data?.total ?? 0, onChange: setPage }}
      />
    </Modal>
  );
}
