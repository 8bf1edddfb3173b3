import { Button, Card, Message, Popconfirm, Tag, Typography } from '@arco-design/web-react';
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

  return (
    <Card
      title={tr('setting.sessions')}
      bordered={false}
      className="aigw-sessions-card"
      data-card="sessions"
      extra={
        <Popconfirm title={tr('setting.sessionRevokeOthers')} onOk={() => void revokeOthers()}>
          <Button size="small" disabled={rows.length < 2}>
            {tr('setting.sessionRevokeOthers')}
          </Button>
        </Popconfirm>
      }
    >
      {rows.map((row) => (
        <div key={row.sid} className="aigw-session-row" data-session={row.current ? 'current' : 'other'}>
          <div className="aigw-session-main">
            <Typography.Text ellipsis={{ showTooltip: true }} className="aigw-session-agent">
              {row.current && (
                <Tag color="green" size="small" style={{ marginRight: 6 }}>
                  {tr('setting.sessionCurrent')}
                </Tag>
              )}
              {row.user_agent || '-'}
            </Typography.Text>
            <Typography.Text type="secondary" className="aigw-session-meta">
              {[
                `${tr('setting.sessionIp')} ${row.ip || '-'}`,
                `${tr('setting.sessionMethod')} ${row.login_method || '-'}`,
                `${tr('setting.sessionCreated')} ${time(row.created_at)}`,
                `${tr('setting.sessionLastActive')} ${time(row.last_active_at)}`,
              ].join(' · ')}
            </Typography.Text>
          </div>
          {!row.current && (
            <Button size="mini" status="danger" onClick={() => void revoke(row.sid)}>
              {tr('setting.sessionRevoke')}
            </Button>
          )}
        </div>
      ))}
    </Card>
  );
}
