import { Button, Card, Message, Popconfirm } from '@arco-design/web-react';
import { useCallback, useEffect, useState } from 'react';
import type { UserRecord } from '../../api/account.ts';
import { getOAuthBindings, type OAuthBinding, ssoProviders, startSso, unbindOAuth } from '../../api/sso.ts';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';

type SsoFields = Partial<Record<'oidc_id' | 'linux_do_id' | 'discord_id', string>>;

/**
 * The personal tab's single sign-on bindings: OIDC, Linux DO, Discord and the admins' custom
 * providers. Binding runs the provider's login from this logged-in browser (the server binds
 * instead of logging in); a custom provider's binding can be removed.
 */
export default function SsoBindingsCard({ self }: { self: UserRecord | null }) {
  const t = useT();
  const { status } = useStatus();
  const providers = ssoProviders(status);
  const [bindings, setBindings] = useState<OAuthBinding[]>([]);
  const hasCustom = providers.some((p) => p.customId);

  const load = useCallback(async () => {
    const res = await getOAuthBindings();
    if (res.success && res.data) setBindings(res.data);
  }, []);
  useEffect(() => {
    if (hasCustom) void load();
  }, [hasCustom, load]);

  if (providers.length === 0 || !self) return null;
  const fields = self as UserRecord & SsoFields;

  const unbind = async (id: number) => {
    const res = await unbindOAuth(id);
    if (!res.success) return;
    Message.success(t('sso.unbound'));
    void load();
  };

  return (
    <Card title={t('sso.bindingsTitle')} bordered={false} data-card="sso-bindings">
      {providers.map((p) => {
        const custom = p.customId ? bindings.find((b) => b.provider_id === p.customId) : undefined;
        const bound = p.field ? fields[p.field] : custom?.provider_user_id;
        return (
          <div className="aigw-binding-row" key={p.name} data-sso-binding={p.name}>
            <span>
              {p.label}
              {t('common.colon')}
              {bound || t('setting.notBound')}
            </span>
            {custom ? (
              <Popconfirm
                title={t('sso.unbindConfirm', { name: p.label })}
                onOk={() => void unbind(custom.provider_id)}
              >
                <Button size="small">{t('sso.unbind')}</Button>
              </Popconfirm>
            ) : (
              <Button size="small" disabled={Boolean(bound)} onClick={() => void startSso(p.name)}>
                {t('sso.bind', { name: p.label })}
              </Button>
            )}
          </div>
        );
      })}
    </Card>
  );
}
