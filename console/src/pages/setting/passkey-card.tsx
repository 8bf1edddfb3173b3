import { Button, Card, Message, Space, Tag, Typography } from '@arco-design/web-react';
import { browserSupportsWebAuthn, startRegistration } from '@simplewebauthn/browser';
import { useCallback, useEffect, useState } from 'react';
import {
  beginPasskeyRegistration,
  deletePasskey,
  finishPasskeyRegistration,
  getPasskeyStatus,
  type PasskeyStatus,
} from '../../api/passkey.ts';
import { getTwoFactorStatus } from '../../api/security.ts';
import { useSecurityProof } from '../../components/SecureVerification/index.tsx';
import { tr } from '../../locale/translate.ts';
import { useStatus } from '../../store/status-context.tsx';

/**
 * The personal tab's passkey card (new-api's): whether one is bound and when it was last used,
 * registering one (with a 2FA proof first when 2FA is on, as the server wants) and removing it
 * (proved by 2FA when on, else by the passkey itself).
 */
export default function PasskeyCard() {
  const { status: site } = useStatus();
  const [status, setStatus] = useState<PasskeyStatus | null>(null);
  const [busy, setBusy] = useState(false);
  const proof = useSecurityProof();

  const load = useCallback(async () => {
    const res = await getPasskeyStatus();
    if (res.success && res.data) setStatus(res.data);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const twoFaOn = async () => Boolean((await getTwoFactorStatus()).data?.enabled);

  const register = async () => {
    if (!browserSupportsWebAuthn()) {
      Message.error(tr('setting.passkeyUnsupported'));
      return;
    }
    setBusy(true);
    try {
      const needs2fa = await twoFaOn();
      const token = needs2fa ? await proof.ask('passkey.register', ['2fa']) : undefined;
      if (needs2fa && !token) return;
      const begin = await beginPasskeyRegistration(token);
      if (!begin.success || !begin.data) return;
      let credential: Awaited<ReturnType<typeof startRegistration>>;
      try {
        credential = await startRegistration({ optionsJSON: begin.data.options });
      } catch {
        Message.error(tr('verify.passkeyCancelled'));
        return;
      }
      const done = await finishPasskeyRegistration(begin.data.flow_token, credential, token);
      if (done.success) Message.success(done.message || tr('setting.passkeyOn'));
    } finally {
      setBusy(false);
      void load();
    }
  };

  const remove = async () => {
    const token = await proof.ask('passkey.delete', (await twoFaOn()) ? ['2fa'] : ['passkey']);
    if (!token) return;
    const res = await deletePasskey(token);
    if (res.success) Message.success(res.message || tr('setting.passkeyOff'));
    void load();
  };

  if (!status || (!site.passkey_login && !status.enabled)) return null;
  return (
    <Card title={tr('setting.passkey')} bordered={false} data-card="passkey">
      <Space wrap>
        <Tag color={status.enabled ? 'green' : 'gray'} data-field="passkey_state">
          {status.enabled ? tr('setting.passkeyOn') : tr('setting.passkeyOff')}
        </Tag>
        {status.enabled && (
          <Typography.Text type="secondary">
            {status.last_used_at
              ? tr('setting.passkeyLastUsed', { time: new Date(status.last_used_at).toLocaleString() })
              : tr('setting.passkeyNeverUsed')}
          </Typography.Text>
        )}
      </Space>
      <Typography.Paragraph type="secondary" style={{ marginTop: 8 }}>
        {tr('setting.passkeyHint')}
      </Typography.Paragraph>
      <Space wrap>
        {site.passkey_login && (
          <Button type={status.enabled ? 'secondary' : 'primary'} loading={busy} onClick={() => void register()}>
            {status.enabled ? tr('setting.passkeyReplace') : tr('setting.passkeyRegister')}
          </Button>
        )}
        {status.enabled && (
          <Button status="danger" onClick={() => void remove()}>
            {tr('setting.passkeyDelete')}
          </Button>
        )}
      </Space>
      {proof.modal}
    </Card>
  );
}
