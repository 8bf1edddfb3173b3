import { Checkbox, Form, type FormInstance, Input, Select } from '@arco-design/web-react';
import type { ChannelTypeInfo } from '../../api/channel.ts';
import { tr } from '../../locale/translate.ts';
import { type ChannelFormValues, type MultiKeyMode, shownKeyParts } from './channel-form-values.ts';
import { joinKeyParts, keyHint } from './channel-types.ts';

type ChannelForm = FormInstance<ChannelFormValues>;

/** One input per part of the key (the key is them joined); editing, all empty keeps the stored key. */
function KeyPartFields({ form, editing, entry }: { form: ChannelForm; editing: boolean; entry?: ChannelTypeInfo }) {
  const type = Form.useWatch('type', form) as number;
  const parts = shownKeyParts(entry, {
    batch: Form.useWatch('batch', form) as boolean,
    multi_key_mode: Form.useWatch('multi_key_mode', form) as MultiKeyMode,
  });
  if (!parts) return null;
  const joinParts = () =>
    form.setFieldValue('key', joinKeyParts(entry, (form.getFieldValue('key_parts') as string[] | undefined) ?? []));
  return (
    <>
      {parts.parts.map((p, i) => (
        <Form.Item
          key={`${type}-${p.label}`}
          label={p.label}
          required={!editing}
          extra={editing && i === 0 ? tr('channelKeys.partsEditHint') : undefined}
          field={`key_parts[${i}]`}
          normalize={(v?: string) => v ?? ''}
          formatter={(v?: string) => v ?? ''}
        >
          {p.secret ? (
            <Input.Password
              name={`key_part_${i}`}
              onChange={joinParts}
              placeholder={p.placeholder}
              autoComplete="new-password"
            />
          ) : (
            <Input name={`key_part_${i}`} onChange={joinParts} placeholder={p.placeholder} />
          )}
        </Form.Item>
      ))}
    </>
  );
}

/** The key text area (one key, or one per line in batch and multi-key modes) with its hints. */
function KeyTextField({ form, editing, entry }: { form: ChannelForm; editing: boolean; entry?: ChannelTypeInfo }) {
  const batch = Form.useWatch('batch', form) as boolean;
  const mode = Form.useWatch('multi_key_mode', form) as MultiKeyMode;
  if (shownKeyParts(entry, { batch, multi_key_mode: mode })) return null;
  const extra =
    [
      mode ? tr('channelKeys.multiKeyHint') : editing ? tr('channelForm.leaveEmptyToKeepThe') : undefined,
      // Several keys of parts in one text area: each line in the type's format.
      entry?.key_parts ? keyHint(entry) : undefined,
    ]
      .filter(Boolean)
      .join(' ') || undefined;
  return (
    <Form.Item label={tr('common.key')} required={!editing} extra={extra} field="key">
      <Input.TextArea
        name="key"
        placeholder={batch || mode ? tr('channelForm.enterTheKeysOnePer') : keyHint(entry)}
        autoSize={{ minRows: batch || mode || entry?.form.single_key ? 4 : 1, maxRows: 12 }}
      />
    </Form.Item>
  );
}

/**
 * The key: its parts or the text area, the multi-key mode (changing it empties the key) and, for
 * a new channel, batch creation (one channel per key).
 */
export function ChannelKeyFields({
  form,
  editing,
  entry,
}: {
  form: ChannelForm;
  editing: boolean;
  entry?: ChannelTypeInfo;
}) {
  const batch = Form.useWatch('batch', form) as boolean;
  const mode = Form.useWatch('multi_key_mode', form) as MultiKeyMode;
  return (
    <>
      <KeyPartFields form={form} editing={editing} entry={entry} />
      <KeyTextField form={form} editing={editing} entry={entry} />
      {!entry?.form.single_key && !batch && (
        <Form.Item label={tr('channelKeys.multiKeyMode')} field="multi_key_mode">
          <Select onChange={() => form.setFieldsValue({ key_parts: [], key: '' })}>
            <Select.Option value="">{tr('channelKeys.multiKeyOff')}</Select.Option>
            <Select.Option value="random">{tr('channelKeys.multiKeyRandom')}</Select.Option>
            <Select.Option value="polling">{tr('channelKeys.multiKeyPolling')}</Select.Option>
          </Select>
        </Form.Item>
      )}
      {!editing && !entry?.form.single_key && !mode && (
        <Form.Item field="batch" triggerPropName="checked">
          <Checkbox>{tr('channelForm.batchCreateOneKeyPer')}</Checkbox>
        </Form.Item>
      )}
    </>
  );
}
