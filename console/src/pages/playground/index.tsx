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
import { IconDelete, IconSend } from '@arco-design/web-react/icon';
import { useEffect, useRef, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { userGroups, userModels } from '../../api/log.ts';
import {
  type ChatMessage,
  chatBody,
  DEFAULT_SETTINGS,
  type MessageStatus,
  type PlaygroundSettings,
  streamChat,
} from './chat-stream.ts';
import './style/index.css';

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

const STATUS_TAG: Record<MessageStatus, [string, string] | undefined> = {
  loading: ['思考中', 'arcoblue'],
  incomplete: ['生成中', 'orange'],
  complete: undefined,
  error: ['出错了', 'red'],
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

  const clear = () => {
    abort.current?.abort();
    setMessages([]);
    setBusy(false);
  };

  return (
    <div className="aigw-playground">
      <Card className="aigw-playground-side" title="设置">
        <Form layout="vertical">
          <Form.Item label="分组">
            <Select
              placeholder="默认分组"
              value={settings.group || undefined}
              options={groups}
              allowClear
              onChange={(v?: string) => patch({ group: v ?? '' })}
            />
          </Form.Item>
          <Form.Item label="模型">
            <Select
              showSearch
              allowCreate
              value={settings.model}
              options={models}
              onChange={(v: string) => patch({ model: v })}
            />
          </Form.Item>
          <Form.Item label={`温度 ${settings.temperature ? settings.temperature.toFixed(1) : '默认'}`}>
            <Slider
              min={0.1}
              max={1}
              step={0.1}
              value={settings.temperature || 0.1}
              onChange={(v) => patch({ temperature: Number(v) })}
            />
          </Form.Item>
          <Form.Item label="最大 Tokens（0 为不限）">
            <InputNumber
              min={0}
              step={1}
              precision={0}
              value={settings.max_tokens}
              onChange={(v) => patch({ max_tokens: Number.parseInt(String(v ?? 0), 10) || 0 })}
            />
          </Form.Item>
          <Form.Item label="系统提示词">
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
            清除上下文
          </Button>
        }
      >
        {params.get('expired') ? (
          <Alert type="warning" content="未登录或登录已过期，请重新登录！" style={{ marginBottom: 12 }} />
        ) : null}
        <div className="aigw-playground-messages">
          {messages.length === 0 ? <Empty description="开始对话吧" /> : null}
          {messages.map((m) => (
            <div key={m.id} className={`aigw-msg aigw-msg-${m.role} aigw-msg-${m.status}`} data-status={m.status}>
              <Space size={6} className="aigw-msg-meta">
                <Typography.Text bold>{m.role === 'user' ? '我' : '助手'}</Typography.Text>
                {STATUS_TAG[m.status] ? (
                  <Tag size="small" color={STATUS_TAG[m.status]?.[1]}>
                    {STATUS_TAG[m.status]?.[0]}
                  </Tag>
                ) : null}
              </Space>
              <div className="aigw-msg-content">{m.status === 'loading' ? <Spin size={14} /> : m.content}</div>
            </div>
          ))}
          <div ref={bottom} />
        </div>
        <div className="aigw-playground-input">
          <Input.TextArea
            name="playground-input"
            placeholder="输入消息，Enter 发送，Shift + Enter 换行"
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
          <Button type="primary" icon={<IconSend />} loading={busy} onClick={() => void send()}>
            发送
          </Button>
        </div>
      </Card>
    </div>
  );
}
