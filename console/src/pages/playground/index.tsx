import {
  Alert,
  Button,
  Card,
  Empty,
  Form,
  Input,
  InputNumber,
  Select,
  Slider,
  Space,
  Spin,
  Tag,
  Typography,
} from '@arco-design/web-react';
import { IconDelete, IconRecordStop, IconSend } from '@arco-design/web-react/icon';
import { useEffect, useMemo, useRef, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { userGroups, userModels } from '../../api/log.ts';
import { replyToSafeHtml } from '../../utils/rich-content.ts';
import {
  type ChatMessage,
  chatBody,
  DEFAULT_SETTINGS,
  type MessageStatus,
  type PlaygroundSettings,
  streamChat,
} from './chat-stream.ts';
import './style/index.css';
import { tr } from '../../locale/translate.ts';
import type { LocaleKey } from '../../locale/zh-CN.ts';

const SETTINGS_KEY = 'playground';

function loadSettings(): PlaygroundSettings {
  try {
    return {
      ...DEFAULT_SETTINGS,
      ...(JSON.parse(localStorage.getItem(SETTINGS_KEY) ?? '{}') as Partial<PlaygroundSettings>),
    };
  } catch {
    return DEFAULT_SETTINGS;
  }
}

const STATUS_TAG: Record<MessageStatus, [LocaleKey, string] | undefined> = {
  loading: ['playground.thinking', 'arcoblue'],
  incomplete: ['playground.generating', 'orange'],
  complete: undefined,
  error: ['playground.somethingWentWrong', 'red'],
};

let seq = 0;
const newId = () => `${Date.now().toString(36)}-${seq++}`;

/** Playground: model chat with streamed replies (spec 02 sections 2-4). */
export default function PlaygroundPage() {
  const [params] = useSearchParams();
  const [settings, setSettings] = useState<PlaygroundSettings>(loadSettings);
  const [groups, setGroups] = useState<{ label: string; value: string }[]>([]);
  const [models, setModels] = useState<string[]>([]);
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [input, setInput] = useState('');
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | undefined>(undefined);
  const bottom = useRef<HTMLDivElement>(null);

  useEffect(() => {
    void userGroups().then((res) => {
      if (!res.success || !res.data) return;
      setGroups(
        Object.entries(res.data).map(([value, label]) => ({
          value,
          label: typeof label === 'string' ? label : (label.desc ?? value),
        })),
      );
    });
    void userModels().then((res) => {
      if (res.success && res.data) setModels(res.data);
    });
    return () => abort.current?.abort();
  }, []);

  useEffect(() => {
    localStorage.setItem(SETTINGS_KEY, JSON.stringify(settings));
  }, [settings]);

  const lastLength = messages.at(-1)?.content.length ?? 0;
  useEffect(() => {
    if (lastLength >= 0) bottom.current?.scrollIntoView?.({ block: 'end' });
  }, [lastLength]);

  const patch = (p: Partial<PlaygroundSettings>) => setSettings((s) => ({ ...s, ...p }));

  const send = async () => {
    const text = input.trim();
    if (!text || busy) return;
    const user: ChatMessage = { id: newId(), role: 'user', content: text, createAt: Date.now(), status: 'complete' };
    const reply: ChatMessage = { id: newId(), role: 'assistant', content: '', createAt: Date.now(), status: 'loading' };
    const history = [...messages, user];
    setMessages([...history, reply]);
    setInput('');
    setBusy(true);
    const ctl = new AbortController();
    abort.current = ctl;
    await streamChat(
      chatBody(settings, history),
      (content, status) => setMessages((ms) => ms.map((m) => (m.id === reply.id ? { ...m, content, status } : m))),
      ctl.signal,
    );
    setBusy(false);
  };

  /** Ends the stream: the connection closes (the gateway cancels upstream) and the reply keeps what arrived. */
  const stop = () => abort.current?.abort();

  const clear = () => {
    abort.current?.abort();
    setMessages([]);
    setBusy(false);
  };

  return (
    <div className="aigw-playground">
      <Card className="aigw-playground-side" title={tr('playground.settings')}>
        <Form layout="vertical">
          <Form.Item label={tr('common.group')}>
            <Select
              placeholder={tr('playground.defaultGroup')}
              value={settings.group || undefined}
              options={groups}
              allowClear
              onChange={(v?: string) => patch({ group: v ?? '' })}
            />
          </Form.Item>
          <Form.Item label={tr('common.model')}>
            <Select
              showSearch
              allowCreate
              value={settings.model}
              options={models}
              onChange={(v: string) => patch({ model: v })}
            />
          </Form.Item>
          <Form.Item
            label={tr('playground.temperature', {
              value: settings.temperature ? settings.temperature.toFixed(1) : tr('playground.default'),
            })}
          >
            <Slider
              min={0.1}
              max={1}
              step={0.1}
              value={settings.temperature || 0.1}
              onChange={(v) => patch({ temperature: Number(v) })}
            />
          </Form.Item>
          <Form.Item label={tr('playground.maxTokens0NoLimit')}>
            <InputNumber
              min={0}
              step={1}
              precision={0}
              value={settings.max_tokens}
              onChange={(v) => patch({ max_tokens: Number.parseInt(String(v ?? 0), 10) || 0 })}
            />
          </Form.Item>
          <Form.Item label={tr('playground.systemPrompt')}>
            <Input.TextArea
              autoSize={{ minRows: 3, maxRows: 8 }}
              value={settings.system}
              onChange={(v) => patch({ system: v })}
            />
          </Form.Item>
        </Form>
      </Card>
      <Card
        className="aigw-playground-chat"
        title="Playground"
        extra={
          <Button icon={<IconDelete />} onClick={clear}>
            {tr('playground.clearContext')}
          </Button>
        }
      >
        {params.get('expired') ? (
          <Alert type="warning" content={tr('common.notLoggedInOrThe')} style={{ marginBottom: 12 }} />
        ) : null}
        <div className="aigw-playground-messages">
          {messages.length === 0 ? <Empty description={tr('playground.startAConversation')} /> : null}
          {messages.map((m) => (
            <div key={m.id} className={`aigw-msg aigw-msg-${m.role} aigw-msg-${m.status}`} data-status={m.status}>
              <Space size={6} className="aigw-msg-meta">
                <Typography.Text bold>
                  {m.role === 'user' ? tr('playground.me') : tr('playground.assistant')}
                </Typography.Text>
                {STATUS_TAG[m.status] ? (
                  <Tag size="small" color={STATUS_TAG[m.status]?.[1]}>
                    {tr(STATUS_TAG[m.status]?.[0] ?? 'playground.thinking')}
                  </Tag>
                ) : null}
              </Space>
              {m.status === 'loading' ? (
                <div className="aigw-msg-content">
                  <Spin size={14} />
                </div>
              ) : m.role === 'assistant' && m.status !== 'error' ? (
                <Reply content={m.content} />
              ) : (
                <div className="aigw-msg-content">{m.content}</div>
              )}
            </div>
          ))}
          <div ref={bottom} />
        </div>
        <div className="aigw-playground-input">
          <Input.TextArea
            name="playground-input"
            placeholder={tr('playground.typeAMessageEnterSends')}
            autoSize={{ minRows: 2, maxRows: 6 }}
            value={input}
            onChange={setInput}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) {
                e.preventDefault();
                void send();
              }
            }}
          />
          {busy ? (
            <Button status="warning" icon={<IconRecordStop />} onClick={stop} className="aigw-playground-stop">
              {tr('playground.stop')}
            </Button>
          ) : (
            <Button type="primary" icon={<IconSend />} onClick={() => void send()}>
              {tr('playground.send')}
            </Button>
          )}
        </div>
      </Card>
    </div>
  );
}

/** A reply as Markdown, sanitized, with highlighted code blocks. */
function Reply({ content }: { content: string }) {
  const html = useMemo(() => replyToSafeHtml(content), [content]);
  // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitized by replyToSafeHtml (DOMPurify)
  return <div className="aigw-msg-content aigw-msg-markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}
