import { Button, Divider, Space } from '@arco-design/web-react';
import { IconLock } from '@arco-design/web-react/icon';
import { ssoProviders, startSso } from '../../api/sso.ts';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';

/**
 * The single sign-on buttons of /login and /register: one per enabled provider (OIDC, Linux DO,
 * Discord, the admins' custom providers). A click asks the server for the provider's
 * authorization URL and goes there; the provider sends the browser back to /oauth/<provider>.
 */
export default function SsoButtons({ divider = false }: { divider?: boolean }) {
  const t = useT();
  const { status } = useStatus();
  const providers = ssoProviders(status);
  if (providers.length === 0) return null;
  return (
    <>
      {divider && <Divider>{t('login.otherMethods')}</Divider>}
      <Space className="aigw-sso-buttons" direction="vertical" style={{ width: '100%', marginTop: 8 }}>
        {providers.map((p) => (
          <Button key={p.name} long icon={<IconLock />} data-sso={p.name} onClick={() => void startSso(p.name)}>
            {t('sso.continueWith', { name: p.label })}
          </Button>
        ))}
      </Space>
    </>
  );
}
