import { Message, Result, Spin } from '@arco-design/web-react';
import { useEffect, useState } from 'react';
import { useNavigate, useParams } from 'react-router-dom';
import { useStatus } from '../../store/status-context.tsx';
import {
  ChatMessages,
  chatLinkAt,
  fillChatLink,
  firstEnabledKey,
  NO_TOKEN_REDIRECT_MS,
  serverAddress,
} from './chat-link.ts';

/**
 * /chat/{id}: the configured chat app in a frame, signed in with the first enabled token; without
 * one, the spec's message and, 1.5 s later, the token page.
 */
export default function ChatPage() {
  const { id = '0' } = useParams();
  const { status } = useStatus();
  const navigate = useNavigate();
  const [src, setSrc] = useState<string>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    setSrc(undefined);
    setError(undefined);
    const found = chatLinkAt(status, Number(id) || 0);
    if ('error' in found) {
      setError(found.error);
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
      setSrc(fillChatLink(found.link, key, serverAddress(status)));
    });
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
  }, [id, status, navigate]);

  if (error) return <Result status="warning" title={error} />;
  if (!src) return <Spin style={{ display: 'block', margin: '80px auto' }} />;
  return <iframe key={id} title="chat" src={src} style={{ width: '100%', height: 'calc(100vh - 120px)', border: 0 }} />;
}
