import { Button, Card, Descriptions, Message } from '@arco-design/web-react';
import { useCallback, useEffect, useState } from 'react';
import { type CheckinStatus, doCheckin, getCheckin } from '../../api/security.ts';
import Turnstile from '../../components/Turnstile/index.tsx';
import { tr } from '../../locale/translate.ts';
import { useStatus } from '../../store/status-context.tsx';
import { renderQuota } from '../../utils/format.ts';

/** The personal tab's daily check-in (shown when the operator turned check-in on). */
export default function CheckinCard({ onCheckedIn }: { onCheckedIn: () => void }) {
  const { status } = useStatus();
  const [data, setData] = useState<CheckinStatus | null>(null);
  const [turnstileToken, setTurnstileToken] = useState('');
  const [busy, setBusy] = useState(false);
  const enabled = Boolean(status.checkin_enabled);

  const load = useCallback(async () => {
    const res = await getCheckin();
    setData(res.success && res.data ? res.data : null);
  }, []);
  useEffect(() => {
    if (enabled) void load();
  }, [enabled, load]);

  const checkin = async () => {
    if (status.turnstile_check && !turnstileToken) {
      Message.info(tr('login.turnstileWait'));
      return;
    }
    setBusy(true);
    const res = await doCheckin(turnstileToken);
    setBusy(false);
    if (!res.success || !res.data) return;
    Message.success(tr('setting.checkinDone', { quota: renderQuota(res.data.quota_awarded, status) }));
    void load();
    onCheckedIn();
  };

  if (!enabled || !data) return null;
  const done = data.stats.checked_in_today;
  return (
    <Card title={tr('setting.checkin')} bordered={false} data-card="checkin">
      <Descriptions
        column={1}
        data={[
          {
            label: tr('setting.checkinReward'),
            value: `${renderQuota(data.min_quota, status)} ~ ${renderQuota(data.max_quota, status)}`,
          },
          { label: tr('setting.checkinThisMonth'), value: data.stats.checkin_count },
          { label: tr('setting.checkinTotal'), value: renderQuota(data.stats.total_quota, status) },
        ]}
      />
      <Button type="primary" disabled={done} loading={busy} onClick={() => void checkin()}>
        {done ? tr('setting.checkedInToday') : tr('setting.checkinNow')}
      </Button>
      {!done && status.turnstile_check && status.turnstile_site_key && (
        <Turnstile siteKey={status.turnstile_site_key} onVerify={setTurnstileToken} />
      )}
    </Card>
  );
}
