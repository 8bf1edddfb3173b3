import {
  Button,
  Form,
  type FormInstance,
  Input,
  InputNumber,
  Message,
  Result,
  Select,
  Space,
  Spin,
  Switch,
} from '@arco-design/web-react';
import { useEffect, useRef, useState } from 'react';
import { listGroups } from '../../api/admin-user.ts';
import { type ChannelTypeInfo, createChannel, getChannel, updateChannel } from '../../api/channel.ts';
import { tr } from '../../locale/translate.ts';
import {
  type ChannelFormValues,
  channelBody,
  channelFormError,
  channelValuesOf,
  EMPTY_CHANNEL,
  keepsStoredKey,
  overridesOpen,
  shownKeyParts,
  typeChange,
} from './channel-form-values.ts';
import { ChannelKeyFields } from './channel-key-fields.tsx';
import { ChannelMappingFields } from './channel-mapping-fields.tsx';
import { ChannelModelsField } from './channel-models-field.tsx';
import { ChannelOverridesSection } from './channel-overrides-section.tsx';
import { inLang, otherField, typeLabel, typeOf, useChannelTypes } from './channel-types.ts';

type ChannelForm = FormInstance<ChannelFormValues>;
const FIELDS = Object.keys(EMPTY_CHANNEL) as (keyof ChannelFormValues)[];
const number = (v?: number) => v ?? 0;

/** Saves the values once at a time (a second submission meanwhile is refused), then calls onDone. */
function useChannelSubmit(form: ChannelForm, id: number | undefined, types: ChannelTypeInfo[], onDone: () => void) {
  const editing = id !== undefined;
  const [saving, setSaving] = useState(false);
  // Set until the answer to a submission arrives.
  const inFlight = useRef(false);
  const submit = async () => {
    if (inFlight.current) {
      Message.error(tr('common.duplicateSubmit'));
      return;
    }
    const values = form.getFieldsValue(FIELDS) as ChannelFormValues;
    const parts = shownKeyParts(typeOf(types, values.type), values);
    const error = channelFormError(values, editing, parts);
    if (error) {
      Message.error(error);
      return;
    }
    // No key sent keeps the stored one.
    const body = channelBody(keepsStoredKey(values, editing, parts) ? { ...values, key: '' } : values);
    setSaving(true);
    inFlight.current = true;
    const res = editing ? await updateChannel({ ...body, id }) : await createChannel({ ...body, batch: values.batch });
    setSaving(false);
    inFlight.current = false;
    if (res.success) {
      Message.success(editing ? tr('channelForm.channelUpdated') : tr('channelForm.channelCreated'));
      onDone();
    }
  };
  return { saving, submit };
}

/** The type (searchable; changing it resets what depends on it), name, base URL and the type's other field. */
function ChannelBasicFields({ form, types }: { form: ChannelForm; types: ChannelTypeInfo[] }) {
  const type = Form.useWatch('type', form) as number;
  const entry = typeOf(types, type);
  const other = otherField(entry);
  const changeType = (next: number) =>
    form.setFieldsValue(
      typeChange(form.getFieldsValue(['other', 'key']) as ChannelFormValues, entry, typeOf(types, next)),
    );
  return (
    <>
      <Form.Item label={tr('common.type')} required field="type">
        <Select
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
      <Form.Item label={tr('common.name')} required field="name">
        <Input name="name" placeholder={tr('channelForm.nameTheChannel')} />
      </Form.Item>
      <Form.Item
        label={entry?.form.base_url_label ? inLang(entry.form.base_url_label) : tr('channelForm.baseUrl')}
        field="base_url"
      >
        <Input
          name="base_url"
          placeholder={
            entry?.form.base_url_placeholder
              ? inLang(entry.form.base_url_placeholder)
              : tr('channelForm.optionalEmptyUsesTheOfficial')
          }
        />
      </Form.Item>
      {other && (
        <Form.Item label={other.label} extra={other.hint || undefined} field="other">
          <Input name="other" placeholder={other.placeholder} />
        </Form.Item>
      )}
    </>
  );
}

/** The groups that may use the channel (known groups, or new ones typed). */
function ChannelGroupsField() {
  const [groups, setGroups] = useState<string[]>(['default']);
  useEffect(() => {
    void listGroups().then((res) => res.success && res.data && setGroups(res.data));
  }, []);
  return (
    <Form.Item label={tr('common.group')} field="groups">
      <Select mode="multiple" allowCreate placeholder={tr('channelForm.selectTheGroupsThatMay')}>
        {groups.map((g) => (
          <Select.Option key={g} value={g}>
            {g}
          </Select.Option>
        ))}
      </Select>
    </Form.Item>
  );
}

/** Max input tokens, test model, priority, weight and automatic disabling. */
function ChannelRoutingFields() {
  return (
    <>
      <Form.Item
        label={tr('channelForm.maxInputTokens')}
        extra={tr('channelForm.maxInputTokensExtra')}
        field="max_input_tokens"
        normalize={number}
      >
        <InputNumber min={0} precision={0} style={{ width: 200 }} />
      </Form.Item>
      <Form.Item label={tr('channelForm.testModel')} extra={tr('channelForm.modelUsedToTestThe')} field="test_model">
        <Input placeholder={tr('channelForm.forExampleGpt4oMini')} />
      </Form.Item>
      <Space size="large" wrap>
        <Form.Item label={tr('common.priority')} field="priority" normalize={number}>
          <InputNumber min={-999} precision={0} style={{ width: 140 }} />
        </Form.Item>
        <Form.Item label={tr('common.weight')} field="weight" normalize={number}>
          <InputNumber min={0} precision={0} style={{ width: 140 }} />
        </Form.Item>
        <Form.Item label={tr('common.autoDisable')} field="auto_ban" triggerPropName="checked">
          <Switch />
        </Form.Item>
      </Space>
    </>
  );
}

/** The form over loaded values: every field group, then submit and cancel. */
function ChannelFormBody({ id, initial, onDone }: { id?: number; initial: ChannelFormValues; onDone: () => void }) {
  const editing = id !== undefined;
  const [form] = Form.useForm<ChannelFormValues>();
  // The per-type fields come from the server's channel-type catalogue.
  const types = useChannelTypes();
  // The loaded type until the form has mounted (its values are read once it has).
  const entry = typeOf(types, (Form.useWatch('type', form) as number | undefined) ?? initial.type);
  const { saving, submit } = useChannelSubmit(form, id, types, onDone);
  return (
    <Form
      form={form}
      initialValues={initial}
      layout="vertical"
      className="aigw-channel-form"
      onSubmit={() => void submit()}
    >
      <ChannelBasicFields form={form} types={types} />
      <ChannelKeyFields form={form} editing={editing} entry={entry} />
      {entry?.form.openai_organization && (
        <Form.Item label={tr('channelForm.openaiOrganization')} field="openai_organization">
          <Input placeholder={tr('channelForm.optional')} />
        </Form.Item>
      )}
      <ChannelGroupsField />
      <ChannelModelsField form={form} id={id} entry={entry} />
      <ChannelMappingFields form={form} />
      <ChannelOverridesSection open={overridesOpen(initial.overrides)} />
      <ChannelRoutingFields />
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

/**
 * Add or edit a channel: type with per-type key hints and defaults, model picker (type models,
 * upstream fetch for type 1, custom models), groups, mappings checked as JSON, priority, weight.
 * Editing, the channel is loaded first (渠道未找到，请刷新页面后重试。 when it is gone).
 */
export default function ChannelForm({ id, onDone }: { id?: number; onDone: () => void }) {
  const editing = id !== undefined;
  const [initial, setInitial] = useState<ChannelFormValues | undefined>(editing ? undefined : EMPTY_CHANNEL);
  const [missing, setMissing] = useState(false);
  useEffect(() => {
    if (!editing) return;
    void getChannel(id, { toast: false }).then((res) => {
      if (res.success && res.data) setInitial(channelValuesOf(res.data));
      else setMissing(true);
    });
  }, [editing, id]);

  if (missing) return <Result status="404" subTitle={tr('channelForm.channelNotFound')} />;
  if (!initial) return <Spin style={{ display: 'block', margin: '48px auto' }} />;
  return <ChannelFormBody id={id} initial={initial} onDone={onDone} />;
}
