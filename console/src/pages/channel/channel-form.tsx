import {
  Button,
  Checkbox,
  Collapse,
  Form,
  Input,
  InputNumber,
  Message,
  Result,
  Select,
  Space,
  Spin,
  Switch,
  Typography,
} from '@arco-design/web-react';
import { useEffect, useMemo, useRef, useState } from 'react';
import { listGroups } from '../../api/admin-user.ts';
import {
  type Channel,
  type ChannelInput,
  createChannel,
  fetchChannelModels,
  fetchUpstreamModels,
  getChannel,
  updateChannel,
} from '../../api/channel.ts';
import { tr } from '../../locale/translate.ts';
import { type OverrideFields, overrideErrors, overrideFieldsOf, overridesBody } from './channel-overrides.ts';
import {
  defaultOther,
  inLang,
  joinKeyParts,
  keyHint,
  keyParts,
  otherField,
  typeLabel,
  typeOf,
  useChannelTypes,
} from './channel-types.ts';
import { loadTypeModels } from './type-models.ts';

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
  max_input_tokens: number;
  auto_ban: boolean;
  priority: number;
  weight: number;
  batch: boolean;
  /** The values of a key made of parts (types 15, 18, 22, 23, 33). */
  key_parts: string[];
  multi_key_mode: '' | 'random' | 'polling';
  /** param_override, header_override, setting (as fields) and settings. */
  overrides: OverrideFields;
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
  max_input_tokens: 0,
  auto_ban: true,
  priority: 0,
  weight: 0,
  batch: false,
  key_parts: [],
  multi_key_mode: '',
  overrides: overrideFieldsOf({}),
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
    max_input_tokens: c.max_input_tokens ?? 0,
    auto_ban: c.auto_ban === 1,
    priority: c.priority,
    weight: c.weight,
    batch: false,
    key_parts: [],
    multi_key_mode: c.multi_key_mode === 'random' || c.multi_key_mode === 'polling' ? c.multi_key_mode : '',
    overrides: overrideFieldsOf(c),
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
  const [missing, setMissing] = useState(false);
  // Set until the answer to a submission arrives; a second submission meanwhile is refused.
  const inFlight = useRef(false);
  const [typeModels, setTypeModels] = useState<Record<string, string[]>>({});
  const [groups, setGroups] = useState<string[]>(['default']);
  const [custom, setCustom] = useState('');
  const [fetching, setFetching] = useState(false);
  // The per-type fields come from the server's channel-type catalogue.
  const types = useChannelTypes();
  const entry = typeOf(types, form.type);
  const other = otherField(entry);
  const set = <K extends keyof FormState>(key: K, value: FormState[K]) => setForm((f) => ({ ...f, [key]: value }));
  const setOverride = <K extends keyof OverrideFields>(key: K, value: OverrideFields[K]) =>
    setForm((f) => ({ ...f, overrides: { ...f.overrides, [key]: value } }));

  useEffect(() => {
    void loadTypeModels(setTypeModels);
    void listGroups().then((res) => res.success && res.data && setGroups(res.data));
  }, []);
  useEffect(() => {
    if (!editing) return;
    void getChannel(id, { toast: false }).then((res) => {
      setLoading(false);
      if (res.success && res.data) setForm(fromChannel(res.data));
      else setMissing(true);
    });
  }, [editing, id]);

  const allModels = useMemo(() => [...new Set(Object.values(typeModels).flat())].sort(), [typeModels]);
  const options = useMemo(() => [...new Set([...form.models, ...allModels])], [form.models, allModels]);

  const changeType = (type: number) =>
    setForm((f) => ({
      ...f,
      type,
      other: f.other && f.other !== defaultOther(typeOf(types, f.type)) ? f.other : defaultOther(typeOf(types, type)),
      key_parts: [],
      key: keyParts(typeOf(types, type)) ? '' : f.key,
    }));
  // Types with a key of parts show one input per part unless several keys go in the text area.
  const parts = !form.batch && !form.multi_key_mode ? keyParts(entry) : undefined;
  const setPart = (i: number, v: string) =>
    setForm((f) => {
      const values = [...f.key_parts];
      values[i] = v;
      return { ...f, key_parts: values, key: joinKeyParts(typeOf(types, f.type), values) };
    });

  const addCustom = () => {
    const names = custom
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (names.length === 0) return;
    if (names.some((n) => form.models.includes(n))) {
      Message.error(tr('channelForm.someModelsAlreadyExist'));
      return;
    }
    set('models', [...form.models, ...names]);
    setCustom('');
  };

  const fetchModels = async () => {
    if (!entry?.form.openai_organization) {
      Message.error(tr('channelForm.onlyTheOpenaiApiFormat'));
      return;
    }
    if (!editing && !form.key.trim()) {
      Message.error(tr('channelForm.pleaseFillInTheKey'));
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
      Message.success(tr('channelForm.fetchedModels', { n: res.data.length }));
    } else if (!res.success) Message.error(tr('channelForm.failedToFetchTheModel'));
  };

  const submit = async () => {
    if (inFlight.current) {
      Message.error(tr('common.duplicateSubmit'));
      return;
    }
    if (!editing && (!form.name.trim() || !form.key.trim())) {
      Message.error(tr('channelForm.pleaseFillInTheChannel'));
      return;
    }
    if (parts && form.key && parts.parts.some((_p, i) => !(form.key_parts[i] ?? '').trim())) {
      Message.error(tr('channelKeys.partsIncomplete', { format: parts.parts.map((p) => p.label).join(parts.sep) }));
      return;
    }
    if (form.models.length === 0) {
      Message.error(tr('channelForm.pleaseSelectAtLeastOne'));
      return;
    }
    if (!isJsonObject(form.model_mapping)) {
      Message.error(tr('channelForm.theModelMappingMustBe'));
      return;
    }
    if (!isJsonObject(form.status_code_mapping)) {
      Message.error(tr('channelForm.theStatusCodeOverrideMust'));
      return;
    }
    const overrideError = overrideErrors(form.overrides)[0];
    if (overrideError) {
      Message.error(overrideError);
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
      max_input_tokens: form.max_input_tokens,
      auto_ban: form.auto_ban ? 1 : 0,
      priority: form.priority,
      weight: form.weight,
      multi_key_mode: form.multi_key_mode,
      ...overridesBody(form.overrides),
    };
    if (form.key.trim()) body.key = form.key.trim();
    setSaving(true);
    inFlight.current = true;
    const res = editing ? await updateChannel({ ...body, id }) : await createChannel({ ...body, batch: form.batch });
    setSaving(false);
    inFlight.current = false;
    if (res.success) {
      Message.success(editing ? tr('channelForm.channelUpdated') : tr('channelForm.channelCreated'));
      onDone();
    }
  };

  if (loading) return <Spin style={{ display: 'block', margin: '48px auto' }} />;
  if (missing) return <Result status="404" subTitle={tr('channelForm.channelNotFound')} />;

  return (
    <Form layout="vertical" className="aigw-channel-form" onSubmit={() => void submit()}>
      <Form.Item label={tr('common.type')} required>
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
          {types.map((o) => (
            <Select.Option key={o.type} value={o.type}>
              {typeLabel(o)}
            </Select.Option>
          ))}
        </Select>
      </Form.Item>
      <Form.Item label={tr('common.name')} required>
        <Input
          name="name"
          value={form.name}
          onChange={(v) => set('name', v)}
          placeholder={tr('channelForm.nameTheChannel')}
        />
      </Form.Item>
      <Form.Item label={entry?.form.base_url_label ? inLang(entry.form.base_url_label) : tr('channelForm.baseUrl')}>
        <Input
          name="base_url"
          value={form.base_url}
          onChange={(v) => set('base_url', v)}
          placeholder={
            entry?.form.base_url_placeholder
              ? inLang(entry.form.base_url_placeholder)
              : tr('channelForm.optionalEmptyUsesTheOfficial')
          }
        />
      </Form.Item>
      {other && (
        <Form.Item label={other.label} extra={other.hint || undefined}>
          <Input name="other" value={form.other} onChange={(v) => set('other', v)} placeholder={other.placeholder} />
        </Form.Item>
      )}
      {parts ? (
        parts.parts.map((p, i) => (
          <Form.Item
            key={`${form.type}-${p.label}`}
            label={p.label}
            required={!editing}
            extra={editing && i === 0 ? tr('channelKeys.partsEditHint') : undefined}
          >
            {p.secret ? (
              <Input.Password
                name={`key_part_${i}`}
                value={form.key_parts[i] ?? ''}
                onChange={(v) => setPart(i, v)}
                placeholder={p.placeholder}
                autoComplete="new-password"
              />
            ) : (
              <Input
                name={`key_part_${i}`}
                value={form.key_parts[i] ?? ''}
                onChange={(v) => setPart(i, v)}
                placeholder={p.placeholder}
              />
            )}
          </Form.Item>
        ))
      ) : (
        <Form.Item
          label={tr('common.key')}
          required={!editing}
          extra={
            [
              form.multi_key_mode
                ? tr('channelKeys.multiKeyHint')
                : editing
                  ? tr('channelForm.leaveEmptyToKeepThe')
                  : undefined,
              // Several keys of parts in one text area: each line in the type's format.
              entry?.key_parts ? keyHint(entry) : undefined,
            ]
              .filter(Boolean)
              .join(' ') || undefined
          }
        >
          <Input.TextArea
            name="key"
            value={form.key}
            onChange={(v) => set('key', v)}
            placeholder={form.batch || form.multi_key_mode ? tr('channelForm.enterTheKeysOnePer') : keyHint(entry)}
            autoSize={{ minRows: form.batch || form.multi_key_mode || entry?.form.single_key ? 4 : 1, maxRows: 12 }}
          />
        </Form.Item>
      )}
      {!entry?.form.single_key && !form.batch && (
        <Form.Item label={tr('channelKeys.multiKeyMode')}>
          <Select
            value={form.multi_key_mode}
            onChange={(v: FormState['multi_key_mode']) =>
              setForm((f) => ({ ...f, multi_key_mode: v, key_parts: [], key: '' }))
            }
          >
            <Select.Option value="">{tr('channelKeys.multiKeyOff')}</Select.Option>
            <Select.Option value="random">{tr('channelKeys.multiKeyRandom')}</Select.Option>
            <Select.Option value="polling">{tr('channelKeys.multiKeyPolling')}</Select.Option>
          </Select>
        </Form.Item>
      )}
      {!editing && !entry?.form.single_key && !form.multi_key_mode && (
        <Form.Item>
          <Checkbox checked={form.batch} onChange={(v) => set('batch', v)}>
            {tr('channelForm.batchCreateOneKeyPer')}
          </Checkbox>
        </Form.Item>
      )}
      {entry?.form.openai_organization && (
        <Form.Item label={tr('channelForm.openaiOrganization')}>
          <Input
            value={form.openai_organization}
            onChange={(v) => set('openai_organization', v)}
            placeholder={tr('channelForm.optional')}
          />
        </Form.Item>
      )}
      <Form.Item label={tr('common.group')}>
        <Select
          mode="multiple"
          allowCreate
          value={form.groups}
          onChange={(v: string[]) => set('groups', v)}
          placeholder={tr('channelForm.selectTheGroupsThatMay')}
        >
          {groups.map((g) => (
            <Select.Option key={g} value={g}>
              {g}
            </Select.Option>
          ))}
        </Select>
      </Form.Item>
      <Form.Item label={tr('common.model')} required>
        <Select
          mode="multiple"
          value={form.models}
          onChange={(v: string[]) => set('models', v)}
          placeholder={tr('channelForm.selectTheModelsThisChannel')}
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
            {tr('channelForm.addRelatedModels')}
          </Button>
          <Button size="small" onClick={() => set('models', allModels)}>
            {tr('channelForm.addAllModels')}
          </Button>
          <Button size="small" loading={fetching} onClick={() => void fetchModels()}>
            {tr('channelForm.fetchModelList')}
          </Button>
          <Button size="small" status="warning" onClick={() => set('models', [])}>
            {tr('channelForm.clearAllModels')}
          </Button>
        </Space>
        <Input.Search
          style={{ marginTop: 8 }}
          value={custom}
          onChange={setCustom}
          onSearch={addCustom}
          searchButton={tr('channelForm.add')}
          placeholder={tr('channelForm.customModelNamesSeparateSeveral')}
        />
      </Form.Item>
      <Form.Item
        label={tr('channelForm.modelMapping')}
        extra={
          <Typography.Text
            type="secondary"
            style={{ cursor: 'pointer' }}
            onClick={() => set('model_mapping', MAPPING_EXAMPLE)}
          >
            {tr('channelForm.optionalAJsonStringThat')}
          </Typography.Text>
        }
      >
        <Input.TextArea
          value={form.model_mapping}
          onChange={(v) => set('model_mapping', v)}
          placeholder={`${tr('common.forExample')}\n${MAPPING_EXAMPLE}`}
          autoSize={{ minRows: 3, maxRows: 10 }}
        />
      </Form.Item>
      <Form.Item
        label={tr('channelForm.statusCodeOverride')}
        extra={
          <Typography.Text
            type="secondary"
            style={{ cursor: 'pointer' }}
            onClick={() => set('status_code_mapping', STATUS_CODE_EXAMPLE)}
          >
            {tr('channelForm.optionalOverridesReturnedStatusCodes')}
          </Typography.Text>
        }
      >
        <Input.TextArea
          value={form.status_code_mapping}
          onChange={(v) => set('status_code_mapping', v)}
          placeholder={`${tr('common.forExample')}\n${STATUS_CODE_EXAMPLE}`}
          autoSize={{ minRows: 2, maxRows: 6 }}
        />
      </Form.Item>
      <Collapse
        bordered={false}
        className="aigw-channel-overrides"
        defaultActiveKey={
          overridesBody(form.overrides).setting ||
          form.overrides.param_override ||
          form.overrides.header_override ||
          form.overrides.settings
            ? ['overrides']
            : []
        }
      >
        <Collapse.Item name="overrides" header={tr('channelOverrides.section')}>
          <Form.Item label={tr('channelOverrides.paramOverride')} extra={tr('channelOverrides.paramOverrideExtra')}>
            <Input.TextArea
              name="param_override"
              value={form.overrides.param_override}
              onChange={(v) => setOverride('param_override', v)}
              placeholder='{"temperature": 0.2}'
              autoSize={{ minRows: 2, maxRows: 10 }}
            />
          </Form.Item>
          <Form.Item label={tr('channelOverrides.headerOverride')} extra={tr('channelOverrides.headerOverrideExtra')}>
            <Input.TextArea
              name="header_override"
              value={form.overrides.header_override}
              onChange={(v) => setOverride('header_override', v)}
              placeholder='{"Authorization": "Bearer {api_key}"}'
              autoSize={{ minRows: 2, maxRows: 8 }}
            />
          </Form.Item>
          <Form.Item label={tr('channelOverrides.systemPrompt')} extra={tr('channelOverrides.systemPromptExtra')}>
            <Input.TextArea
              name="system_prompt"
              value={form.overrides.system_prompt}
              onChange={(v) => setOverride('system_prompt', v)}
              autoSize={{ minRows: 2, maxRows: 8 }}
            />
          </Form.Item>
          <Form.Item label={tr('channelOverrides.proxy')}>
            <Input
              name="proxy"
              value={form.overrides.proxy}
              onChange={(v) => setOverride('proxy', v)}
              placeholder={tr('channelOverrides.proxyPlaceholder')}
            />
          </Form.Item>
          <Space size="large" wrap>
            {(
              [
                ['system_prompt_override', 'channelOverrides.systemPromptOverride'],
                ['force_format', 'channelOverrides.forceFormat'],
                ['thinking_to_content', 'channelOverrides.thinkingToContent'],
                ['pass_through_body_enabled', 'channelOverrides.passThroughBody'],
              ] as const
            ).map(([key, label]) => (
              <Form.Item key={key} label={tr(label)}>
                <Switch checked={form.overrides[key]} onChange={(v) => setOverride(key, v)} />
              </Form.Item>
            ))}
          </Space>
          <Form.Item label={tr('channelOverrides.otherSettings')} extra={tr('channelOverrides.otherSettingsExtra')}>
            <Input.TextArea
              name="settings"
              value={form.overrides.settings}
              onChange={(v) => setOverride('settings', v)}
              autoSize={{ minRows: 1, maxRows: 6 }}
            />
          </Form.Item>
        </Collapse.Item>
      </Collapse>
      <Form.Item label={tr('channelForm.maxInputTokens')} extra={tr('channelForm.maxInputTokensExtra')}>
        <InputNumber
          value={form.max_input_tokens}
          min={0}
          precision={0}
          onChange={(v) => set('max_input_tokens', v ?? 0)}
          style={{ width: 200 }}
        />
      </Form.Item>
      <Form.Item label={tr('channelForm.testModel')} extra={tr('channelForm.modelUsedToTestThe')}>
        <Input
          value={form.test_model}
          onChange={(v) => set('test_model', v)}
          placeholder={tr('channelForm.forExampleGpt4oMini')}
        />
      </Form.Item>
      <Space size="large" wrap>
        <Form.Item label={tr('common.priority')}>
          <InputNumber
            value={form.priority}
            min={-999}
            precision={0}
            onChange={(v) => set('priority', v ?? 0)}
            style={{ width: 140 }}
          />
        </Form.Item>
        <Form.Item label={tr('common.weight')}>
          <InputNumber
            value={form.weight}
            min={0}
            precision={0}
            onChange={(v) => set('weight', v ?? 0)}
            style={{ width: 140 }}
          />
        </Form.Item>
        <Form.Item label={tr('common.autoDisable')}>
          <Switch checked={form.auto_ban} onChange={(v) => set('auto_ban', v)} />
        </Form.Item>
      </Space>
      <Form.Item>
        <Space>
          <Button type="primary" htmlType="submit" loading={saving}>
            {tr('common.submit')}
          </Button>
          <Button onClick={onDone}>{tr('common.cancel')}</Button>
        </Space>
      </Form.Item>
    </Form>
  );
}
