import { Button, Message } from '@arco-design/web-react';
import { browserSupportsWebAuthn, startAuthentication } from '@simplewebauthn/browser';
import { useState } from 'react';
import { beginPasskeyLogin, finishPasskeyLogin } from '../../api/passkey.ts';
import type { User } from '../../api/types.ts';
import { tr } from '../../locale/translate.ts';
import { useStatus } from '../../store/status-context.tsx';

/**
 * The login page's passkey button (when passkey.enabled): a discoverable-credential login, so the
 * user picks the account in the browser's own dialog and types no name.
 */
export default function PasskeyLogin({ onLoggedIn }: { onLoggedIn: (user: User) => void }) {
  const { status } = useStatus();
  const [busy, setBusy] = useState(false);
  if (!status.passkey_login) return null;

  const login = async () => {
    if (!browserSupportsWebAuthn()) {
      Message.error(tr('setting.passkeyUnsupported'));
      return;
    }
    setBusy(true);
    try {
      const begin = await beginPasskeyLogin();
      if (!begin.success || !begin.data) return;
      let credential: Awaited<ReturnType<typeof startAuthentication>>;
      try {
        credential = await startAuthentication({ optionsJSON: begin.data.options });
      } catch {
        Message.error(tr('verify.passkeyCancelled'));
        return;
      }
      const done = await finishPasskeyLogin(begin.data.flow_token, credential);
      if (done.success && done.data) onLoggedIn(done.data);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Button long type="outline" loading={busy} onClick={() => void login()} style={{ marginTop: 8 }}>
      {tr('login.passkey')}
    </Button>
  );
}
