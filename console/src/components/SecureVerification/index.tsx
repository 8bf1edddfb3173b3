import { Button, Input, Message, Modal, Space, Typography } from '@arco-design/web-react';
import { startAuthentication } from '@simplewebauthn/browser';
import { type ReactNode, useEffect, useState } from 'react';
import {
  beginPasskeyVerify,
  finishPasskeyVerify,
  getPasskeyStatus,
  type ProofMethod,
  type ProofScope,
  verifySelf,
} from '../../api/passkey.ts';
import { getTwoFactorStatus } from '../../api/security.ts';
import { tr } from '../../locale/translate.ts';

/** Which second factors the logged-in user has (2FA, passkey). */
export async function secondFactors(): Promise<{ twoFa: boolean; passkey: boolean }> {
  const [twoFa, passkey] = await Promise.all([getTwoFactorStatus(), getPasskeyStatus()]);
  return { twoFa: Boolean(twoFa.data?.enabled), passkey: Boolean(passkey.data?.enabled) };
}

/** The browser's passkey answer for a verify ceremony, then the proof; undefined when it failed. */
export async function passkeyProof(scope: ProofScope): Promise<string | undefined> {
  const begin = await beginPasskeyVerify(scope);
  if (!begin.success || !begin.data) return undefined;
  let credential: Awaited<ReturnType<typeof startAuthentication>>;
  try {
    credential = await startAuthentication({ optionsJSON: begin.data.options });
  } catch {
    Message.error(tr('verify.passkeyCancelled'));
    return undefined;
  }
  const done = await finishPasskeyVerify(begin.data.flow_token, credential);
  return done.success ? done.data?.proof_token : undefined;
}

interface Ask {
  scope: ProofScope;
  methods: ProofMethod[];
  resolve: (proof: string | undefined) => void;
}

/** The modal: a passkey button, a 2FA code or the password, as the user has them and the scope allows. */
function SecureVerificationModal({ ask, onDone }: { ask: Ask; onDone: (proof: string | undefined) => void }) {
  const [factors, setFactors] = useState<{ twoFa: boolean; passkey: boolean } | null>(null);
  const [secret, setSecret] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    void secondFactors().then(setFactors);
  }, []);
  const allows = (m: ProofMethod) => ask.methods.includes(m);
  const withPasskey = allows('passkey') && factors?.passkey;
  const textMethod: '2fa' | 'password' | undefined =
    allows('2fa') && factors?.twoFa ? '2fa' : allows('password') ? 'password' : undefined;

  const byPasskey = async () => {
    setBusy(true);
    const proof = await passkeyProof(ask.scope);
    setBusy(false);
    if (proof) onDone(proof);
  };
  const byText = async () => {
    if (!textMethod || !secret.trim()) return;
    setBusy(true);
    const res = await verifySelf(textMethod, secret.trim(), ask.scope);
    setBusy(false);
    if (res.success && res.data) onDone(res.data.proof_token);
  };

  return (
    <Modal
      title={tr('verify.title')}
      visible
      onOk={() => void byText()}
      okButtonProps={{ disabled: !textMethod, loading: busy }}
      okText={tr('verify.confirm')}
      onCancel={() => onDone(undefined)}
    >
      <Typography.Paragraph>{tr('verify.hint')}</Typography.Paragraph>
      {factors && (
        <Space direction="vertical" style={{ width: '100%' }}>
          {withPasskey && (
            <Button long type="outline" loading={busy} onClick={() => void byPasskey()}>
              {tr('verify.passkey')}
            </Button>
          )}
          {textMethod === '2fa' && (
            <Input
              name="verify_code"
              placeholder={tr('verify.code')}
              value={secret}
              onChange={setSecret}
              autoComplete="one-time-code"
            />
          )}
          {textMethod === 'password' && (
            <Input.Password
              name="verify_password"
              placeholder={tr('verify.password')}
              value={secret}
              onChange={setSecret}
              autoComplete="current-password"
            />
          )}
          {!withPasskey && !textMethod && <Typography.Text type="warning">{tr('verify.none')}</Typography.Text>}
        </Space>
      )}
    </Modal>
  );
}

/**
 * Re-verification before a sensitive action (new-api's secure verification): `ask` opens the modal
 * and resolves with a proof token for `scope` (undefined when the user cancels); render `modal`.
 */
export function useSecurityProof(): {
  ask: (scope: ProofScope, methods?: ProofMethod[]) => Promise<string | undefined>;
  modal: ReactNode;
} {
  const [pending, setPending] = useState<Ask | null>(null);
  const ask = (scope: ProofScope, methods: ProofMethod[] = ['2fa', 'passkey', 'password']) =>
    new Promise<string | undefined>((resolve) => setPending({ scope, methods, resolve }));
  const modal = pending ? (
    <SecureVerificationModal
      ask={pending}
      onDone={(proof) => {
        pending.resolve(proof);
        setPending(null);
      }}
    />
  ) : null;
  return { ask, modal };
}
