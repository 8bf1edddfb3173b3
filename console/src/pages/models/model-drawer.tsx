import { Button, Drawer, Form, Input, Message, Select, Space, Switch } from '@arco-design/web-react';
import { useEffect, useState } from 'react';
import { createModelMeta, updateModelMeta, type Vendor } from '../../api/model-meta.ts';
import { tr } from '../../locale/translate.ts';
import { type ModelForm, modelFormError, NAME_RULES } from './model-form.ts';

/** The create/edit drawer of one model's metadata; `form` null hides it. */
export default function ModelDrawer({
  form: initial,
  vendors,
  onClose,
  onSaved,
}: {
  form: ModelForm | null;
  vendors: Vendor[];
  onClose: () => void;
  onSaved: () => void;
}) {
  const [form, setForm] = useState<ModelForm | null>(initial);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string>();
  useEffect(() => {
    setForm(initial);
    setError(undefined);
  }, [initial]);

  const submit = async () => {
    if (!form) return;
    const problem = modelFormError(form);
    if (problem) {
      setError(tr(problem));
      return;
    }
    setSaving(true);
    const body = { ...form, model_name: form.model_name.trim() };
    const res = form.id ? await updateModelMeta(body) : await createModelMeta(body);
    setSaving(false);
    if (!res.success) return;
    Message.success(tr(form.id ? 'models.updated' : 'models.created'));
    onSaved();
  };

  const set = (patch: Partial<ModelForm>) => form && setForm({ ...form, ...patch });
  return (
    <Drawer
      width={520}
      title={form?.id ? tr('models.editModel') : tr('models.addModel')}
      visible={form !== null}
      onCancel={onClose}
      footer={
        <Space>
          <Button onClick={onClose}>{tr('common.cancel')}</Button>
          <Button type="primary" loading={saving} onClick={() => void submit()}>
            {tr('common.submit')}
          </Button>
        </Space>
      }
    >
      {form && (
        <Form layout="vertical">
          <Form.Item label={tr('models.modelName')} required validateStatus={error ? 'error' : undefined} help={error}>
            <Input
              name="model-name"
              value={form.model_name}
              onChange={(v) => {
                setError(undefined);
                set({ model_name: v });
              }}
            />
          </Form.Item>
          <Form.Item label={tr('models.nameRule')} extra={tr('models.nameRuleExtra')}>
            <Select value={form.name_rule} onChange={(v: number) => set({ name_rule: v })}>
              {NAME_RULES.map((key, i) => (
                <Select.Option key={key} value={i}>
                  {tr(key)}
                </Select.Option>
              ))}
            </Select>
          </Form.Item>
          <Form.Item label={tr('models.vendor')}>
            <Select
              allowClear
              showSearch
              value={form.vendor_id || undefined}
              placeholder={tr('models.noVendor')}
              onChange={(v?: number) => set({ vendor_id: v ?? 0 })}
            >
              {vendors.map((v) => (
                <Select.Option key={v.id} value={v.id}>
                  {v.name}
                </Select.Option>
              ))}
            </Select>
          </Form.Item>
          <Form.Item label={tr('models.description')}>
            <Input.TextArea
              autoSize={{ minRows: 2 }}
              value={form.description}
              onChange={(v) => set({ description: v })}
            />
          </Form.Item>
          <Form.Item label={tr('models.icon')}>
            <Input value={form.icon} onChange={(v) => set({ icon: v })} />
          </Form.Item>
          <Form.Item label={tr('models.tags')} extra={tr('models.tagsExtra')}>
            <Input value={form.tags} onChange={(v) => set({ tags: v })} />
          </Form.Item>
          <Form.Item label={tr('models.endpoints')} extra={tr('models.endpointsExtra')}>
            <Input.TextArea
              autoSize={{ minRows: 2 }}
              value={form.endpoints}
              onChange={(v) => {
                setError(undefined);
                set({ endpoints: v });
              }}
            />
          </Form.Item>
          <Space size={24}>
            <Form.Item label={tr('common.status')}>
              <Switch checked={form.status === 1} onChange={(on) => set({ status: on ? 1 : 0 })} />
            </Form.Item>
            <Form.Item label={tr('models.syncOfficial')}>
              <Switch checked={form.sync_official === 1} onChange={(on) => set({ sync_official: on ? 1 : 0 })} />
            </Form.Item>
          </Space>
        </Form>
      )}
    </Drawer>
  );
}
