import { Button, Form, type FormInstance, Input, Message, Select, Space } from '@arco-design/web-react';
import { useEffect, useMemo, useState } from 'react';
import { type ChannelTypeInfo, fetchChannelModels, fetchUpstreamModels } from '../../api/channel.ts';
import { tr } from '../../locale/translate.ts';
import type { ChannelFormValues } from './channel-form-values.ts';
import { loadTypeModels } from './type-models.ts';

type ChannelForm = FormInstance<ChannelFormValues>;

/** The model names typed in the custom field (comma separated), or an error when one is already chosen. */
export function customModels(text: string, chosen: string[]): { names: string[] } | { error: string } {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.some((n) => chosen.includes(n))) return { error: tr('channelForm.someModelsAlreadyExist') };
  return { names };
}

/**
 * The upstream's model list (type 1 only): with the typed key (its first line), or, editing with
 * no key typed, with the stored one.
 */
function useFetchModels(form: ChannelForm, id: number | undefined, entry: ChannelTypeInfo | undefined) {
  const [fetching, setFetching] = useState(false);
  const fetchModels = async () => {
    const { key, type, base_url, models } = form.getFieldsValue([
      'key',
      'type',
      'base_url',
      'models',
    ]) as ChannelFormValues;
    if (!entry?.form.openai_organization) {
      Message.error(tr('channelForm.onlyTheOpenaiApiFormat'));
      return;
    }
    if (id === undefined && !key.trim()) {
      Message.error(tr('channelForm.pleaseFillInTheKey'));
      return;
    }
    setFetching(true);
    const res =
      id !== undefined && !key.trim()
        ? await fetchChannelModels(id)
        : await fetchUpstreamModels({ type, base_url, key: key.split('\n')[0] ?? '' });
    setFetching(false);
    if (res.success && res.data) {
      form.setFieldValue('models', [...new Set([...models, ...res.data])]);
      Message.success(tr('channelForm.fetchedModels', { n: res.data.length }));
    } else if (!res.success) Message.error(tr('channelForm.failedToFetchTheModel'));
  };
  return { fetching, fetchModels };
}

/**
 * The model picker: the chosen models among every type's models, the type's related models, all,
 * the upstream's list, clear, and custom names.
 */
export function ChannelModelsField({ form, id, entry }: { form: ChannelForm; id?: number; entry?: ChannelTypeInfo }) {
  const [typeModels, setTypeModels] = useState<Record<string, string[]>>({});
  const [custom, setCustom] = useState('');
  const { fetching, fetchModels } = useFetchModels(form, id, entry);
  const models = (Form.useWatch('models', form) as string[] | undefined) ?? [];
  const type = Form.useWatch('type', form) as number;
  useEffect(() => {
    void loadTypeModels(setTypeModels);
  }, []);
  const allModels = useMemo(() => [...new Set(Object.values(typeModels).flat())].sort(), [typeModels]);
  const options = useMemo(() => [...new Set([...models, ...allModels])], [models, allModels]);
  const setModels = (next: string[]) => form.setFieldValue('models', next);

  const addCustom = () => {
    const typed = customModels(custom, models);
    if ('error' in typed) {
      Message.error(typed.error);
      return;
    }
    if (typed.names.length === 0) return;
    setModels([...models, ...typed.names]);
    setCustom('');
  };

  return (
    <Form.Item label={tr('common.model')} required>
      <Form.Item field="models" noStyle>
        <Select
          mode="multiple"
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
      </Form.Item>
      <Space wrap style={{ marginTop: 8 }}>
        <Button
          size="small"
          type="primary"
          onClick={() => setModels([...new Set([...models, ...(typeModels[String(type)] ?? [])])])}
        >
          {tr('channelForm.addRelatedModels')}
        </Button>
        <Button size="small" onClick={() => setModels(allModels)}>
          {tr('channelForm.addAllModels')}
        </Button>
        <Button size="small" loading={fetching} onClick={() => void fetchModels()}>
          {tr('channelForm.fetchModelList')}
        </Button>
        <Button size="small" status="warning" onClick={() => setModels([])}>
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
  );
}
