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
import { useStatus } from '../../store/status-context.tsx';
import { useUser } from '../../store/user-context.tsx';
import { copyText } from '../../utils/clipboard.ts';
import { renderQuota } from '../../utils/format.ts';
import { startGitHubOAuth } from '../login/index.tsx';
import { ChangePasswordModal, DeleteAccountModal, EmailBindModal, WechatBindModal } from './personal-dialogs.tsx';

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
    await copyText(res.data, '令牌已重置并已复制到剪贴板');
  };

  const transfer = async () => {
    const unit = status.quota_per_unit || 500000;
    if (transferAmount < unit) {
      Message.error(`划转金额最低为 ${quota(unit)}`);
      return;
    }
    const res = await transferAffQuota(transferAmount);
    if (res.success) {
      Message.success(res.message || '划转成功');
      setDialog(null);
      void load();
    }
  };

  const onTelegram = async (fields: TelegramAuth) => {
    const res = await telegramBind(fields);
    if (res.success) {
      Message.success('绑定成功！');
      void load();
    }
  };

  const afterDelete = () => {
    clearUser();
    Message.success('账户已删除！');
    navigate('/login');
  };

  if (!self) return <Empty />;
  return (
    <div className="aigw-personal">
      <Card title="个人信息" bordered={false} data-card="profile">
        <Descriptions
          column={1}
          data={[
            { label: 'ID', value: self.id },
            { label: '用户名', value: self.username },
            { label: '分组', value: self.group },
            { label: '当前余额', value: <span data-field="quota">{quota(self.quota)}</span> },
            { label: '历史消耗', value: quota(self.used_quota) },
            { label: '请求次数', value: self.request_count },
          ]}
        />
        <Typography.Title heading={6}>可用模型（点击复制）</Typography.Title>
        <div className="aigw-model-chips">
          {models.length === 0 ? (
            <Typography.Text type="secondary">暂无可用模型</Typography.Text>
          ) : (
            models.map((m) => (
              <Tag key={m} color="arcoblue" onClick={() => void copyText(m, `已复制：${m}`)}>
                {m}
              </Tag>
            ))
          )}
        </div>
        <Button style={{ marginTop: 8 }} onClick={() => navigate('/user/edit')}>
          更新个人信息
        </Button>
      </Card>

      <Card title="邀请信息" bordered={false} data-card="invite">
        <Descriptions
          column={1}
          data={[
            { label: '待使用收益', value: <span data-field="aff_quota">{quota(self.aff_quota)}</span> },
            { label: '总收益', value: quota(self.aff_history_quota) },
            { label: '邀请人数', value: self.aff_count },
          ]}
        />
        <Input readOnly value={affLink} addBefore="邀请链接" />
        <Space style={{ marginTop: 12 }}>
          <Button onClick={() => void copyText(affLink)}>复制邀请链接</Button>
          <Button
            type="primary"
            disabled={self.aff_quota <= 0}
            onClick={() => {
              setTransferAmount(self.aff_quota);
              setDialog('transfer');
            }}
          >
            划转到余额
          </Button>
        </Space>
      </Card>

      <Card title="账号绑定" bordered={false} data-card="bindings">
        <div className="aigw-binding-row">
          <span>邮箱：{self.email || '未绑定'}</span>
          <Button size="small" onClick={() => setDialog('email')}>
            {self.email ? '修改绑定' : '绑定邮箱'}
          </Button>
        </div>
        {status.wechat_login && (
          <div className="aigw-binding-row">
            <span>微信：{self.wechat_id ? '已绑定' : '未绑定'}</span>
            <Button size="small" disabled={Boolean(self.wechat_id)} onClick={() => setDialog('wechat')}>
              绑定微信账号
            </Button>
          </div>
        )}
        {status.github_oauth && (
          <div className="aigw-binding-row">
            <span>GitHub：{self.github_id || '未绑定'}</span>
            <Button
              size="small"
              disabled={Boolean(self.github_id)}
              onClick={() => void startGitHubOAuth(status.github_client_id ?? '')}
            >
              绑定 GitHub 账号
            </Button>
          </div>
        )}
        {status.telegram_oauth && (
          <div className="aigw-binding-row">
            <span>Telegram：{self.telegram_id || '未绑定'}</span>
            {!self.telegram_id && (
              <TelegramLoginButton botName={status.telegram_bot_name ?? ''} onAuth={(u) => void onTelegram(u)} />
            )}
          </div>
        )}
      </Card>

      <Card title="安全设置" bordered={false} data-card="security">
        <Space wrap>
          <Button onClick={() => void newToken()}>生成系统访问令牌</Button>
          <Button onClick={() => setDialog('password')}>修改密码</Button>
          <Button status="danger" onClick={() => setDialog('delete')}>
            删除个人账户
          </Button>
        </Space>
        {token && (
          <Input.Password readOnly value={token} style={{ marginTop: 12 }} onClick={() => void copyText(token)} />
        )}
      </Card>

      <Modal
        title="划转邀请额度"
        visible={dialog === 'transfer'}
        onOk={() => void transfer()}
        onCancel={() => setDialog(null)}
      >
        <Typography.Paragraph>可用额度：{quota(self.aff_quota)}</Typography.Paragraph>
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
