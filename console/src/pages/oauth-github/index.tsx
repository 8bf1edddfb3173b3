import { Message, Spin } from '@arco-design/web-react';
import { useEffect, useRef, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router-dom';
import { githubCallback } from '../../api/account.ts';
import { useT } from '../../locale/index.tsx';
import { useUser } from '../../store/user-context.tsx';

const MAX_TRIES = 3;

/**
 * /oauth/github?code=&state=: GitHub sends the browser here. A binding goes back to /setting, a
 * login to /token; a failure is shown and goes to /setting.
 */
export default function OAuthGithubPage() {
  const t = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const { setUser } = useUser();
  const [prompt, setPrompt] = useState(t('oauth.processing'));
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const code = params.get('code') ?? '';
    const state = params.get('state') ?? '';
    const run = async (attempt: number): Promise<void> => {
      const res = await githubCallback(code, state);
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
      // A state is good once: retrying helps only for transient failures, not for refusals.
      if (attempt < MAX_TRIES && !res.message) {
        setPrompt(t('oauth.failed', { n: attempt }));
        await new Promise((r) => setTimeout(r, 2000));
        return run(attempt + 1);
      }
      Message.error(res.message);
      navigate('/setting');
    };
    void run(1);
  }, [navigate, params, setUser, t]);

  return (
    <div style={{ display: 'flex', justifyContent: 'center', padding: 80 }}>
      <Spin tip={prompt} size={40} />
    </div>
  );
}
