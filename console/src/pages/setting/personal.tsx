import {
  Button,
  Card,
  Descriptions,
  Empty,
  Input,
  InputNumber,
  Message,
  Modal,
  Space,
  Tag,
  Typography,
} from '@arco-design/web-react';
import { useCallback, useEffect, useState } from 'react';
import { useNavigate } from 'react-router-dom';
import {
  generateAccessToken,
  getAffCode,
  getSelf,
  getUserModels,
  type TelegramAuth,
  telegramBind,
  transferAffQuota,
  type UserRecord,
} from '../../api/account.ts';
import TelegramLoginButton from '../../components/TelegramLoginButton/index.tsx';
import { tr } from '../../locale/translate.ts';
import { useStatus } from '../../store/status-context.tsx';
import { useUser } from '../../store/user-context.tsx';
import { copyText } from '../../utils/clipboard.ts';
import { quotaPerUnitOf, renderQuota } from '../../utils/format.ts';
import { startGitHubOAuth } from '../login/index.tsx';
import CheckinCard from './checkin-card.tsx';
import LoginSessionsCard from './login-sessions-card.tsx';
import NotificationCard from './notification-card.tsx';
import PasskeyCard from './passkey-card.tsx';
import { ChangePasswordModal, DeleteAccountModal, EmailBindModal, WechatBindModal } from './personal-dialogs.tsx';
import SsoBindingsCard from './sso-bindings-card.tsx';
import TwoFactorCard from './two-factor-card.tsx';

type Dialog = 'password' | 'delete' | 'email' | 'wechat' | 'transfer' | null;

/** The personal tab: profile with model chips, invite card, bindings, access token, password, deletion. */
export default function PersonalSetting() {
  const { status } = useStatus();
  const { setUser, clearUser } = useUser();
  const navigate = useNavigate();
  const [self, setSelf] = useState<UserRecord | null>(null);
  const [models, setModels] = useState<string[]>([]);
  const [affLink, setAffLink] = useState('');
  const [token, setToken] = useState('');
  const [dialog, setDialog] = useState<Dialog>(null);
  const [transferAmount, setTransferAmount] = useState(0);
  const quota = (n: number) => renderQuota(n, status);

  const load = useCallback(async () => {
    const res = await getSelf();
    if (res.success && res.data) {
      setSelf(res.data);
      setUser(res.data);
    }
  }, [setUser]);

  useEffect(() => {
    void load();
    void getUserModels().then((res) => res.success && setModels(res.data ?? []));
    void getAffCode().then(
      (res) => res.success && res.data && setAffLink(`${window.location.origin}/register?aff=${res.data}`),
    );
  }, [load]);

  const newToken = async () => {
    const res = await generateAccessToken();
    if (!res.success || !res.data) return;
    setToken(res.data);
    await copyText(res.data, tr('setting.tokenResetAndCopiedTo'));
  };

  const transfer = async () => {
    const unit = quotaPerUnitOf(status);
    if (transferAmount < unit) {
      Message.error(tr('setting.transferMin', { min: quota(unit) }));
      return;
    }
    const res = await transferAffQuota(transferAmount);
    if (res.success) {
      Message.success(res.message || tr('setting.transferred'));
      setDialog(null);
      void load();
    }
  };

  const onTelegram = async (fields: TelegramAuth) => {
    const res = await telegramBind(fields);
    if (res.success) {
      Message.success(tr('setting.bound'));
      void load();
    }
  };

  const afterDelete = () => {
    clearUser();
    Message.success(tr('setting.accountDeleted'));
    navigate('/login');
  };

  if (!self) return <Empty />;
  return (
    <div className="aigw-personal">
      <Card title={tr('setting.profile')} bordered={false} data-card="profile">
        <Descriptions
          column={1}
          data={[
            { label: 'ID', value: self.id },
            { label: tr('common.username2'), value: self.username },
            { label: tr('common.group'), value: self.group },
            { label: tr('common.balance'), value: <span data-field="quota">{quota(self.quota)}</span> },
            { label: tr('setting.usedSoFar'), value: quota(self.used_quota) },
            { label: tr('common.requests'), value: self.request_count },
          ]}
        />
        <Typography.Title heading={6}>{tr('setting.availableModelsClickToCopy')}</Typography.Title>
        <div className="aigw-model-chips">
          {models.length === 0 ? (
            <Typography.Text type="secondary">{tr('setting.noModelsAvailable')}</Typography.Text>
          ) : (
            models.map((m) => (
              <Tag key={m} color="arcoblue" onClick={() => void copyText(m, tr('setting.copiedValue', { value: m }))}>
                {m}
              </Tag>
            ))
          )}
        </div>
        <Button style={{ marginTop: 8 }} onClick={() => navigate('/user/edit')}>
          {tr('setting.editProfile')}
        </Button>
      </Card>

      <Card title={tr('setting.invitations')} bordered={false} data-card="invite">
        <Descriptions
          column={1}
          data={[
            { label: tr('setting.pendingRewards'), value: <span data-field="aff_quota">{quota(self.aff_quota)}</span> },
            { label: tr('setting.totalRewards'), value: quota(self.aff_history_quota) },
            { label: tr('setting.invitedUsers'), value: self.aff_count },
          ]}
        />
        <Input readOnly value={affLink} addBefore={tr('setting.invitationLink')} />
        <Space style={{ marginTop: 12 }}>
          <Button onClick={() => void copyText(affLink)}>{tr('setting.copyInvitationLink')}</Button>
          <Button
            type="primary"
            disabled={self.aff_quota <= 0}
            onClick={() => {
              setTransferAmount(self.aff_quota);
              setDialog('transfer');
            }}
          >
            {tr('setting.transferToBalance')}
          </Button>
        </Space>
      </Card>

      <Card title={tr('setting.linkedAccounts')} bordered={false} data-card="bindings">
        <div className="aigw-binding-row">
          <span>
            {tr('setting.emailColon')}
            {self.email || tr('setting.notBound')}
          </span>
          <Button size="small" onClick={() => setDialog('email')}>
            {self.email ? tr('setting.change') : tr('setting.bindEmail')}
          </Button>
        </div>
        {status.wechat_login && (
          <div className="aigw-binding-row">
            <span>
              {tr('setting.wechatColon')}
              {self.wechat_id ? tr('setting.bound2') : tr('setting.notBound')}
            </span>
            <Button size="small" disabled={Boolean(self.wechat_id)} onClick={() => setDialog('wechat')}>
              {tr('setting.bindWechat')}
            </Button>
          </div>
        )}
        {status.github_oauth && (
          <div className="aigw-binding-row">
            <span>
              GitHub{tr('common.colon')}
              {self.github_id || tr('setting.notBound')}
            </span>
            <Button
              size="small"
              disabled={Boolean(self.github_id)}
              onClick={() => void startGitHubOAuth(status.github_client_id ?? '')}
            >
              {tr('setting.bindGithub')}
            </Button>
          </div>
        )}
        {status.telegram_oauth && (
          <div className="aigw-binding-row">
            <span>
              Telegram{tr('common.colon')}
              {self.telegram_id || tr('setting.notBound')}
            </span>
            {!self.telegram_id && (
              <TelegramLoginButton botName={status.telegram_bot_name ?? ''} onAuth={(u) => void onTelegram(u)} />
            )}
          </div>
        )}
      </Card>

      <SsoBindingsCard self={self} />

      <Card title={tr('setting.security')} bordered={false} data-card="security">
        <Space wrap>
          <Button onClick={() => void newToken()}>{tr('setting.generateAnAccessToken')}</Button>
          <Button onClick={() => setDialog('password')}>{tr('setting.changePassword')}</Button>
          <Button status="danger" onClick={() => setDialog('delete')}>
            {tr('setting.deleteMyAccount')}
          </Button>
        </Space>
        {token && (
          <Input.Password readOnly value={token} style={{ marginTop: 12 }} onClick={() => void copyText(token)} />
        )}
      </Card>

      <CheckinCard onCheckedIn={() => void load()} />
      <TwoFactorCard />
      <PasskeyCard />
      <LoginSessionsCard />
      <NotificationCard setting={(self as { setting?: string }).setting} onSaved={() => void load()} />

      <Modal
        title={tr('setting.transferInvitationQuota')}
        visible={dialog === 'transfer'}
        onOk={() => void transfer()}
        onCancel={() => setDialog(null)}
      >
        <Typography.Paragraph>
          {tr('setting.availableQuota')}
          {quota(self.aff_quota)}
        </Typography.Paragraph>
        <InputNumber
          min={0}
          max={self.aff_quota}
          value={transferAmount}
          onChange={(v) => setTransferAmount(Number(v ?? 0))}
          suffix={quota(transferAmount)}
        />
      </Modal>
      <EmailBindModal visible={dialog === 'email'} onClose={() => setDialog(null)} onBound={() => void load()} />
      <WechatBindModal visible={dialog === 'wechat'} onClose={() => setDialog(null)} onBound={() => void load()} />
      <ChangePasswordModal visible={dialog === 'password'} onClose={() => setDialog(null)} hasPassword />
      <DeleteAccountModal
        visible={dialog === 'delete'}
        username={self.username}
        onClose={() => setDialog(null)}
        onDeleted={afterDelete}
      />
    </div>
  );
}
