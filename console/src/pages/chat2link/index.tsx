import { Message, Result, Spin } from '@arco-design/web-react';
import { useEffect, useState } from 'react';
import { useNavigate } from 'react-router-dom';
import { useStatus } from '../../store/status-context.tsx';
import { ChatMessages, fillChatLink, firstEnabledKey, NO_TOKEN_REDIRECT_MS, serverAddress } from '../chat/chat-link.ts';

/** /chat2link: sends the browser to the chat link with the first enabled token. */
export default function Chat2LinkPage() {
  const { status } = useStatus();
  const navigate = useNavigate();
  const [error, setError] = useState<string>();

  useEffect(() => {
    const link = status.chat_link;
    if (!link) {
      setError(ChatMessages.noLink);
      return;
    }
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    void firstEnabledKey().then((key) => {
      if (!live) return;
      if (!key) {
        Message.error(ChatMessages.noToken);
        setError(ChatMessages.noToken);
        timer = setTimeout(() => navigate('/token'), NO_TOKEN_REDIRECT_MS);
        return;
      }
      window.location.href = fillChatLink(link, key, serverAddress(status));
    });
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
  }, [status, navigate]);

  if (error) return <Result status="warning" title={error} />;
  return <Spin style={{ display: 'block', margin: '80px auto' }} />;
}
