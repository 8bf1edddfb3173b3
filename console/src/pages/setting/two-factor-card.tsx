import { Button, Card, Image, Input, Message, Modal, Space, Tag, Typography } from '@arco-design/web-react';
import QRCode from 'qrcode';
import { useCallback, useEffect, useState } from 'react';
import {
  disableTwoFactor,
  enableTwoFactor,
  getTwoFactorStatus,
  regenerateBackupCodes,
  setupTwoFactor,
  type TwoFactorSetup,
  type TwoFactorStatus,
} from '../../api/security.ts';
import { tr } from '../../locale/translate.ts';

type Step = 'setup' | 'disable' | 'regenerate' | 'codes' | null;

/** Backup codes, shown once. */
function BackupCodes({ codes }: { codes: string[] }) {
  return (
    <>
      <Typography.Paragraph>{tr('setting.twoFactorBackupSave')}</Typography.Paragraph>
      <div className="aigw-backup-codes" data-field="backup_codes">
        {codes.map((c) => (
          <Typography.Text key={c} code copyable>
            {c}
          </Typography.Text>
        ))}
      </div>
    </>
  );
}

/** The personal tab's TOTP 2FA card: status, setup with a QR code, disable, new backup codes. */
export default function TwoFactorCard() {
  const [status, setStatus] = useState<TwoFactorStatus | null>(null);
  const [step, setStep] = useState<Step>(null);
  const [setup, setSetup] = useState<TwoFactorSetup | null>(null);
  const [qr, setQr] = useState('');
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[]>([]);

  const load = useCallback(async () => {
    const res = await getTwoFactorStatus();
    if (res.success && res.data) setStatus(res.data);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const close = () => {
    setStep(null);
    setCode('');
  };

  const begin = async () => {
    const res = await setupTwoFactor();
    if (!res.success || !res.data) return;
    setSetup(res.data);
    setQr(await QRCode.toDataURL(res.data.qr_code_data, { margin: 1, width: 200 }));
    setStep('setup');
  };

  const confirm = async () => {
    const value = code.trim();
    if (!value) return;
    if (step === 'setup') {
      const res = await enableTwoFactor(value);
      if (!res.success) return;
      Message.success(res.message || tr('setting.twoFactorOn'));
      setSetup(null);
      close();
    } else if (step === 'disable') {
      const res = await disableTwoFactor(value);
      if (!res.success) return;
      Message.success(res.message || tr('setting.twoFactorOff'));
      close();
    } else if (step === 'regenerate') {
      const res = await regenerateBackupCodes(value);
      if (!res.success || !res.data) return;
      setCodes(res.data.backup_codes);
      setCode('');
      setStep('codes');
    }
    void load();
  };

  if (!status) return null;
  return (
    <Card title={tr('setting.twoFactor')} bordered={false} data-card="two-factor">
      <Space wrap>
        <Tag color={status.enabled ? 'green' : 'gray'} data-field="two_factor_state">
          {status.enabled ? tr('setting.twoFactorOn') : tr('setting.twoFactorOff')}
        </Tag>
        {status.enabled && (
          <Typography.Text type="secondary">
            {tr('setting.twoFactorBackupLeft', { n: status.backup_codes_remaining ?? 0 })}
          </Typography.Text>
        )}
        {status.locked && <Typography.Text type="error">{tr('setting.twoFactorLocked')}</Typography.Text>}
      </Space>
      <Space wrap style={{ marginTop: 12, display: 'flex' }}>
        {status.enabled ? (
          <>
            <Button onClick={() => setStep('regenerate')}>{tr('setting.twoFactorRegenerate')}</Button>
            <Button status="danger" onClick={() => setStep('disable')}>
              {tr('setting.twoFactorDisable')}
            </Button>
          </>
        ) : (
          <Button type="primary" onClick={() => void begin()}>
            {tr('setting.twoFactorEnable')}
          </Button>
        )}
      </Space>

      <Modal
        title={step === 'codes' ? tr('setting.twoFactorRegenerate') : tr('setting.twoFactor')}
        visible={step !== null}
        onOk={() => (step === 'codes' ? close() : void confirm())}
        okText={tr('setting.twoFactorConfirm')}
        onCancel={close}
        unmountOnExit
      >
        {step === 'setup' && setup && (
          <>
            <Typography.Paragraph>{tr('setting.twoFactorScan')}</Typography.Paragraph>
            {qr && <Image src={qr} width={200} preview={false} alt="otpauth QR" />}
            <Typography.Paragraph>
              <Typography.Text code copyable data-field="totp_secret">
                {setup.secret}
              </Typography.Text>
            </Typography.Paragraph>
            <BackupCodes codes={setup.backup_codes} />
          </>
        )}
        {step === 'codes' && <BackupCodes codes={codes} />}
        {step !== 'codes' && (
          <Input
            name="two_factor_code"
            value={code}
            onChange={setCode}
            onPressEnter={() => void confirm()}
            placeholder={
              step === 'disable' ? tr('setting.twoFactorEnterCodeOrBackup') : tr('setting.twoFactorEnterCode')
            }
            autoComplete="one-time-code"
          />
        )}
      </Modal>
    </Card>
  );
}
