import { Message, Spin } from '@arco-design/web-react';
import { useEffect, useRef, useState } from 'react';
import { useNavigate, useParams, useSearchParams } from 'react-router-dom';
import { ssoCallback } from '../../api/sso.ts';
import { useT } from '../../locale/index.tsx';
import { useUser } from '../../store/user-context.tsx';

/**
 * /oauth/:provider?code=&state= (OIDC, Linux DO, Discord, custom providers): the provider sends the
 * browser here. A binding goes back to /setting, a login to /token; a refusal (a bad state or
 * token) is shown and goes back where the user came from. A state is good once: never retried.
 */
export default function OAuthSsoPage() {
  const t = useT();
  const navigate = useNavigate();
  const { provider = '' } = useParams();
  const [params] = useSearchParams();
  const { user, setUser } = useUser();
  const [prompt] = useState(t('oauth.processing'));
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const run = async () => {
      const error = params.get('error');
      if (error) {
        Message.error(params.get('error_description') || error);
        navigate(user ? '/setting' : '/login');
        return;
      }
      const res = await ssoCallback(provider, params.get('code') ?? '', params.get('state') ?? '');
      if (res.success && res.message === 'bind') {
        Message.success(t('oauth.bound'));
        navigate('/setting');
        return;
      }
      if (res.success && res.data) {
        setUser(res.data);
        Message.success(t('login.success'));
        navigate('/token');
        return;
      }
      Message.error(res.message || t('sso.failed'));
      navigate(user ? '/setting' : '/login');
    };
    void run();
  }, [navigate, params, provider, setUser, t, user]);

  return (
    <div style={{ display: 'flex', justifyContent: 'center', padding: 80 }}>
      <Spin tip={prompt} size={40} />
    </div>
  );
}
