import {
  Button,
  Checkbox,
  Form,
  Input,
  InputNumber,
  Message,
  Select,
  Space,
  Spin,
  Switch,
  Typography,
} from '@arco-design/web-react';
import { useEffect, useMemo, useState } from 'react';
import { listGroups } from '../../api/admin-user.ts';
import {
  type Channel,
  type ChannelInput,
  createChannel,
  fetchChannelModels,
  fetchUpstreamModels,
  getChannel,
  modelsByType,
  updateChannel,
} from '../../api/channel.ts';
import { CHANNEL_TYPE_OPTIONS, defaultOther, keyHint, otherLabel } from './channel-types.ts';

const MAPPING_EXAMPLE = JSON.stringify(
  { 'gpt-3.5-turbo': 'gpt-3.5-turbo-0125', 'gpt-4': 'gpt-4-0613', 'gpt-4-32k': 'gpt-4-32k-0613' },
  null,
  2,
);
const STATUS_CODE_EXAMPLE = JSON.stringify({ 400: '500' }, null, 2);

interface FormState {
  name: string;
  type: number;
  key: string;
  base_url: string;
  other: string;
  openai_organization: string;
  models: string[];
  groups: string[];
  model_mapping: string;
  status_code_mapping: string;
  test_model: string;
  auto_ban: boolean;
  priority: number;
  weight: number;
  batch: boolean;
}

const EMPTY: FormState = {
  name: '',
  type: 1,
  key: '',
  base_url: '',
  other: '',
  openai_organization: '',
  models: [],
  groups: ['default'],
  model_mapping: '',
  status_code_mapping: '',
  test_model: '',
  auto_ban: true,
  priority: 0,
  weight: 0,
  batch: false,
};

const split = (s: string) => (s ? s.split(',').filter(Boolean) : []);

function fromChannel(c: Channel): FormState {
  return {
    name: c.name,
    type: c.type,
    key: c.key,
    base_url: c.base_url,
    other: c.other,
    openai_organization: c.openai_organization,
    models: split(c.models),
    groups: split(c.group),
    model_mapping: c.model_mapping,
    status_code_mapping: c.status_code_mapping,
    test_model: c.test_model,
    auto_ban: c.auto_ban === 1,
    priority: c.priority,
    weight: c.weight,
    batch: false,
  };
}

const isJsonObject = (text: string) => {
  if (text.trim() === '') return true;
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
};

/**
 * Add or edit a channel: type with per-type key hints and defaults, model picker (type models,
 * upstream fetch for type 1, custom models), groups, mappings checked as JSON, priority, weight.
 */
export default function ChannelForm({ id, onDone }: { id?: number; onDone: () => void }) {
  const editing = id !== undefined;
  const [form, setForm] = useState<FormState>(EMPTY);
  const [loading, setLoading] = useState(editing);
  const [saving, setSaving] = useState(false);
  const [typeModels, setTypeModels] = useState<Record<string, string[]>>({});
  const [groups, setGroups] = useState<string[]>(['default']);
  const [custom, setCustom] = useState('');
  const [fetching, setFetching] = useState(false);
  const set = <K extends keyof FormState>(key: K, value: FormState[K]) => setForm((f) => ({ ...f, [key]: value }));

  useEffect(() => {
    void modelsByType().then((res) => res.success && setTypeModels(res.data ?? {}));
    void listGroups().then((res) => res.success && res.data && setGroups(res.data));
  }, []);
  useEffect(() => {
    if (!editing) return;
    void getChannel(id).then((res) => {
      setLoading(false);
      if (res.success && res.data) setForm(fromChannel(res.data));
    });
  }, [editing, id]);

  const allModels = useMemo(() => [...new Set(Object.values(typeModels).flat())].sort(), [typeModels]);
  const options = useMemo(() => [...new Set([...form.models, ...allModels])], [form.models, allModels]);

  const changeType = (type: number) =>
    setForm((f) => ({ ...f, type, other: f.other && f.other !== defaultOther(f.type) ? f.other : defaultOther(type) }));

  const addCustom = () => {
    const names = custom
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (names.length === 0) return;
    if (names.some((n) => form.models.includes(n))) {
      Message.error('某些模型已存在！');
      return;
    }
    set('models', [...form.models, ...names]);
    setCustom('');
  };

  const fetchModels = async () => {
    if (form.type !== 1) {
      Message.error('仅支持 OpenAI 接口格式');
      return;
    }
    if (!editing && !form.key.trim()) {
      Message.error('请填写密钥');
      return;
    }
    setFetching(true);
    const res =
      editing && !form.key.trim()
        ? await fetchChannelModels(id)
        : await fetchUpstreamModels({ type: form.type, base_url: form.base_url, key: form.key.split('\n')[0] ?? '' });
    setFetching(false);
    if (res.success && res.data) {
      set('models', [...new Set([...form.models, ...res.data])]);
      Message.success(`已获取 ${res.data.length} 个模型`);
    } else if (!res.success) Message.error('获取模型列表失败');
  };

  const submit = async () => {
    if (!editing && (!form.name.trim() || !form.key.trim())) {
      Message.error('请填写渠道名称和渠道密钥！');
      return;
    }
    if (form.models.length === 0) {
      Message.error('请至少选择一个模型！');
      return;
    }
    if (!isJsonObject(form.model_mapping)) {
      Message.error('模型映射必须是合法的 JSON 格式！');
      return;
    }
    if (!isJsonObject(form.status_code_mapping)) {
      Message.error('状态码复写必须是合法的 JSON 格式！');
      return;
    }
    const body: ChannelInput = {
      name: form.name.trim(),
      type: form.type,
      base_url: form.base_url.trim().replace(/\/+$/, ''),
      other: form.other,
      openai_organization: form.openai_organization,
      models: form.models,
      groups: form.groups.length > 0 ? form.groups : ['default'],
      model_mapping: form.model_mapping,
      status_code_mapping: form.status_code_mapping,
      test_model: form.test_model,
      auto_ban: form.auto_ban ? 1 : 0,
      priority: form.priority,
      weight: form.weight,
    };
    if (form.key.trim()) body.key = form.key.trim();
    setSaving(true);
    const res = editing ? await updateChannel({ ...body, id }) : await createChannel({ ...body, batch: form.batch });
    setSaving(false);
    if (res.success) {
      Message.success(editing ? '渠道更新成功！' : '渠道创建成功！');
      onDone();
    }
  };

  if (loading) return <Spin style={{ display: 'block', margin: '48px auto' }} />;

  return (
    <Form layout="vertical" className="aigw-channel-form" onSubmit={() => void submit()}>
      <Form.Item label="类型" required>
        <Select
          value={form.type}
          onChange={changeType}
          showSearch
          filterOption={(input, option) =>
            String((option as { props?: { children?: unknown } }).props?.children ?? '')
              .toLowerCase()
              .includes(input.toLowerCase())
          }
        >
          {CHANNEL_TYPE_OPTIONS.map((o) => (
            <Select.Option key={o.value} value={o.value}>
              {o.label}
            </Select.Option>
          ))}
        </Select>
      </Form.Item>
      <Form.Item label="名称" required>
        <Input name="name" value={form.name} onChange={(v) => set('name', v)} placeholder="请为渠道命名" />
      </Form.Item>
      <Form.Item label={form.type === 3 ? 'AZURE_OPENAI_ENDPOINT' : '代理地址（Base URL）'}>
        <Input
          name="base_url"
          value={form.base_url}
          onChange={(v) => set('base_url', v)}
          placeholder={
            form.type === 3
              ? '例如：https://docs-test-001.openai.azure.com'
              : '可选，留空则使用官方地址，末尾的 / 会被去掉'
          }
        />
      </Form.Item>
      {otherLabel(form.type) && (
        <Form.Item label={otherLabel(form.type)}>
          <Input
            name="other"
            value={form.other}
            onChange={(v) => set('other', v)}
            placeholder={defaultOther(form.type)}
          />
        </Form.Item>
      )}
      <Form.Item label="密钥" required={!editing} extra={editing ? '留空则不修改密钥' : undefined}>
        <Input.TextArea
          name="key"
          value={form.key}
          onChange={(v) => set('key', v)}
          placeholder={form.batch ? '请输入密钥，一行一个' : keyHint(form.type)}
          autoSize={{ minRows: form.batch || form.type === 41 ? 4 : 1, maxRows: 12 }}
        />
      </Form.Item>
      {!editing && form.type !== 41 && (
        <Form.Item>
          <Checkbox checked={form.batch} onChange={(v) => set('batch', v)}>
            批量创建（一行一个密钥，每个密钥创建一个渠道）
          </Checkbox>
        </Form.Item>
      )}
      {form.type === 1 && (
        <Form.Item label="组织（OpenAI Organization）">
          <Input value={form.openai_organization} onChange={(v) => set('openai_organization', v)} placeholder="可选" />
        </Form.Item>
      )}
      <Form.Item label="分组">
        <Select
          mode="multiple"
          allowCreate
          value={form.groups}
          onChange={(v: string[]) => set('groups', v)}
          placeholder="请选择可以使用该渠道的分组"
        >
          {groups.map((g) => (
            <Select.Option key={g} value={g}>
              {g}
            </Select.Option>
          ))}
        </Select>
      </Form.Item>
      <Form.Item label="模型" required>
        <Select
          mode="multiple"
          value={form.models}
          onChange={(v: string[]) => set('models', v)}
          placeholder="请选择该渠道所支持的模型"
          allowClear
          showSearch
          maxTagCount={40}
        >
          {options.map((m) => (
            <Select.Option key={m} value={m}>
              {m}
            </Select.Option>
          ))}
        </Select>
        <Space wrap style={{ marginTop: 8 }}>
          <Button
            size="small"
            type="primary"
            onClick={() => set('models', [...new Set([...form.models, ...(typeModels[String(form.type)] ?? [])])])}
          >
            填入相关模型
          </Button>
          <Button size="small" onClick={() => set('models', allModels)}>
            填入所有模型
          </Button>
          <Button size="small" loading={fetching} onClick={() => void fetchModels()}>
            获取模型列表
          </Button>
          <Button size="small" status="warning" onClick={() => set('models', [])}>
            清除所有模型
          </Button>
        </Space>
        <Input.Search
          style={{ marginTop: 8 }}
          value={custom}
          onChange={setCustom}
          onSearch={addCustom}
          searchButton="填入"
          placeholder="输入自定义模型名称（多个用英文逗号分隔）"
        />
      </Form.Item>
      <Form.Item
        label="模型重定向"
        extra={
          <Typography.Text
            type="secondary"
            style={{ cursor: 'pointer' }}
            onClick={() => set('model_mapping', MAPPING_EXAMPLE)}
          >
            此项可选，用于修改请求体中的模型名称，为一个 JSON 字符串。点此填入模板
          </Typography.Text>
        }
      >
        <Input.TextArea
          value={form.model_mapping}
          onChange={(v) => set('model_mapping', v)}
          placeholder={`例如：\n${MAPPING_EXAMPLE}`}
          autoSize={{ minRows: 3, maxRows: 10 }}
        />
      </Form.Item>
      <Form.Item
        label="状态码复写"
        extra={
          <Typography.Text
            type="secondary"
            style={{ cursor: 'pointer' }}
            onClick={() => set('status_code_mapping', STATUS_CODE_EXAMPLE)}
          >
            此项可选，用于复写返回的状态码，例如将上游的 400 改为 500。点此填入模板
          </Typography.Text>
        }
      >
        <Input.TextArea
          value={form.status_code_mapping}
          onChange={(v) => set('status_code_mapping', v)}
          placeholder={`例如：\n${STATUS_CODE_EXAMPLE}`}
          autoSize={{ minRows: 2, maxRows: 6 }}
        />
      </Form.Item>
      <Form.Item label="测试模型" extra="测试渠道时使用的模型，留空则使用第一个模型">
        <Input value={form.test_model} onChange={(v) => set('test_model', v)} placeholder="例如：gpt-4o-mini" />
      </Form.Item>
      <Space size="large" wrap>
        <Form.Item label="优先级">
          <InputNumber
            value={form.priority}
            min={-999}
            precision={0}
            onChange={(v) => set('priority', v ?? 0)}
            style={{ width: 140 }}
          />
        </Form.Item>
        <Form.Item label="权重">
          <InputNumber
            value={form.weight}
            min={0}
            precision={0}
            onChange={(v) => set('weight', v ?? 0)}
            style={{ width: 140 }}
          />
        </Form.Item>
        <Form.Item label="自动禁用">
          <Switch checked={form.auto_ban} onChange={(v) => set('auto_ban', v)} />
        </Form.Item>
      </Space>
      <Form.Item>
        <Space>
          <Button type="primary" htmlType="submit" loading={saving}>
            提交
          </Button>
          <Button onClick={onDone}>取消</Button>
        </Space>
      </Form.Item>
    </Form>
  );
}
