import { Button, Card, Message, Popconfirm, Table, Tag } from '@arco-design/web-react';
import { useCallback, useEffect, useState } from 'react';
import { type LoginSession, listSessions, revokeOtherSessions, revokeSession } from '../../api/security.ts';
import { tr } from '../../locale/translate.ts';

const time = (sec: number) => (sec ? new Date(sec * 1000).toLocaleString() : '-');

/** The personal tab's login sessions: where and when each was made, the current one marked. */
export default function LoginSessionsCard() {
  const [rows, setRows] = useState<LoginSession[]>([]);
  const load = useCallback(async () => {
    const res = await listSessions();
    if (res.success && res.data) setRows(res.data);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const revoke = async (sid: string) => {
    const res = await revokeSession(sid);
    if (!res.success) return;
    Message.success(tr('setting.sessionRevoked'));
    void load();
  };
  const revokeOthers = async () => {
    const res = await revokeOtherSessions();
    if (!res.success) return;
    Message.success(tr('setting.sessionRevokedOthers', { n: res.data?.revoked_count ?? 0 }));
    void load();
  };

  const columns = [
    {
      title: tr('setting.sessionDevice'),
      dataIndex: 'user_agent',
      render: (ua: string, row: LoginSession) => (
        <span>
          {row.current && (
            <Tag color="green" size="small" style={{ marginRight: 6 }}>
              {tr('setting.sessionCurrent')}
            </Tag>
          )}
          {ua || '-'}
        </span>
      ),
    },
    { title: tr('setting.sessionIp'), dataIndex: 'ip', render: (ip: string) => ip || '-' },
    { title: tr('setting.sessionMethod'), dataIndex: 'login_method', render: (m: string) => m || '-' },
    { title: tr('setting.sessionCreated'), dataIndex: 'created_at', render: time },
    { title: tr('setting.sessionLastActive'), dataIndex: 'last_active_at', render: time },
    {
      title: '',
      dataIndex: 'sid',
      render: (sid: string, row: LoginSession) =>
        row.current ? null : (
          <Button size="mini" status="danger" onClick={() => void revoke(sid)}>
            {tr('setting.sessionRevoke')}
          </Button>
        ),
    },
  ];

  return (
    <Card
      title={tr('setting.sessions')}
      bordered={false}
      data-card="sessions"
      extra={
        <Popconfirm title={tr('setting.sessionRevokeOthers')} onOk={() => void revokeOthers()}>
          <Button size="small" disabled={rows.length < 2}>
            {tr('setting.sessionRevokeOthers')}
          </Button>
        </Popconfirm>
      }
    >
      <Table rowKey="sid" size="small" columns={columns} data={rows} pagination={false} scroll={{ x: true }} />
    </Card>
  );
}
