import {
  Button,
  Card,
  Form,
  Input,
  InputNumber,
  Message,
  Modal,
  Select,
  Space,
  Switch,
  Typography,
} from '@arco-design/web-react';
import { type ReactNode, useEffect, useState } from 'react';
import { updateOption } from '../../api/option.ts';
import { useLocale } from '../../locale/index.tsx';
import { tr } from '../../locale/translate.ts';
import { planSave } from './save-plan.ts';
import type { FieldSpec, Label, SectionSpec } from './sections.ts';

/** Turning password login off can lock out everyone without another login method. */
export const PASSWORD_LOGIN_WARNING = tr('setting.turnOffPasswordLoginUsers');

interface Props {
  section: SectionSpec;
  /** Saved values (GET /api/option/). */
  values: Record<string, string>;
  /** Called with the keys that were stored, after each save. */
  onSaved: (saved: Record<string, string>) => void;
  children?: ReactNode;
}

/**
 * One settings section: its fields and a save button that sends one PUT per changed key; or, for
 * the login switches, a save per toggle. Shows 你似乎并没有修改什么 when nothing changed, 保存成功
 * when all went through and 部分保存失败，请重试 / 保存失败，请重试 otherwise.
 */
export default function OptionSection({ section, values, onSaved, children }: Props) {
  const { lang } = useLocale();
  const l = (label: Label | undefined) => (label ? tr(label) : undefined);
  const [draft, setDraft] = useState<Record<string, string>>({});
  const [invalid, setInvalid] = useState<string[]>([]);
  const [saving, setSaving] = useState(false);

  // Only this section's own saved values reset its draft (a save elsewhere keeps edits here).
  const own = JSON.stringify(section.fields.map((f) => values[f.key] ?? ''));
  useEffect(() => {
    const saved = JSON.parse(own) as string[];
    setDraft(Object.fromEntries(section.fields.map((f, i) => [f.key, f.kind === 'secret' ? '' : (saved[i] ?? '')])));
  }, [section, own]);

  const put = async (changes: [string, string][]) => {
    const saved: Record<string, string> = {};
    const errors: string[] = [];
    for (const [key, value] of changes) {
      const res = await updateOption(key, value);
      if (res.success) saved[key] = value;
      else errors.push(res.message);
    }
    if (Object.keys(saved).length > 0) onSaved(saved);
    if (errors.length === 0) Message.success(tr('setting.saved'));
    else {
      for (const message of errors) Message.error(message);
      Message.error(
        section.failure
          ? l(section.failure)!
          : errors.length < changes.length
            ? tr('setting.someSettingsWereNotSaved')
            : tr('setting.savingFailedPleaseRetry'),
      );
    }
    return errors.length === 0;
  };

  const save = async () => {
    if (section.requires && !values[section.requires.key]) {
      Message.error(l(section.requires.message)!);
      return;
    }
    const plan = planSave(section, values, draft);
    setInvalid(plan.ok ? [] : (plan.invalidKeys ?? []));
    if (!plan.ok) {
      if (plan.invalidKeys) {
        for (const key of plan.invalidKeys) {
          const field = section.fields.find((f) => f.key === key);
          if (field?.kind === 'json') Message.error(tr('setting.jsonInvalidField', { field: l(field.label) ?? '' }));
        }
        Message.error(plan.message);
      } else Message.warning(plan.message);
      return;
    }
    setSaving(true);
    const ok = await put(plan.changes);
    setSaving(false);
    if (ok)
      setDraft((d) =>
        Object.fromEntries(
          Object.entries(d).map(([k, v]) => [k, section.fields.find((f) => f.key === k)?.kind === 'secret' ? '' : v]),
        ),
      );
  };

  const toggleNow = async (field: FieldSpec, on: boolean) => {
    const go = async () => {
      setDraft((d) => ({ ...d, [field.key]: String(on) }));
      const ok = await put([[field.key, String(on)]]);
      if (!ok) setDraft((d) => ({ ...d, [field.key]: values[field.key] ?? '' }));
    };
    if (field.key === 'PasswordLoginEnabled' && !on) {
      Modal.confirm({ title: tr('setting.warning'), content: PASSWORD_LOGIN_WARNING, onOk: go });
      return;
    }
    await go();
  };

  const input = (field: FieldSpec) => {
    const value = draft[field.key] ?? '';
    const set = (v: string) => setDraft((d) => ({ ...d, [field.key]: v }));
    const placeholder = l(field.placeholder);
    switch (field.kind) {
      case 'switch':
        return (
          <Switch
            checked={value === 'true'}
            onChange={(on) => (section.immediate ? void toggleNow(field, on) : set(String(on)))}
          />
        );
      case 'number':
        return (
          <InputNumber
            value={value === '' ? undefined : Number(value)}
            min={field.min}
            onChange={(v) => set(v === undefined || v === null ? '' : String(v))}
            placeholder={placeholder}
          />
        );
      case 'textarea':
      case 'json':
        return (
          <Input.TextArea
            value={value}
            onChange={set}
            placeholder={placeholder}
            autoSize={{ minRows: field.kind === 'json' ? 6 : 4, maxRows: 16 }}
          />
        );
      case 'select':
        return (
          <Select value={value} onChange={(v: string) => set(v)}>
            {(field.choices ?? []).map(([v, label]) => (
              <Select.Option key={v} value={v}>
                {l(label)}
              </Select.Option>
            ))}
          </Select>
        );
      case 'secret':
        return <Input.Password value={value} onChange={set} placeholder={placeholder} autoComplete="new-password" />;
      default:
        return <Input value={value} onChange={set} placeholder={placeholder} />;
    }
  };

  return (
    <Card className="aigw-option-section" title={l(section.title)} bordered={false} data-section={section.id}>
      {/* The draft is the one source of the fields' values, so no Form.Item gets a `field`: with
          one, Arco's form store (never filled here) would override each input's value with
          undefined and every field but the switches (bound by `checked`) would show empty. */}
      <Form layout="vertical">
        {section.fields.map((field) => (
          <Form.Item
            key={field.key}
            label={l(field.label)}
            extra={l(field.extra)}
            validateStatus={invalid.includes(field.key) ? 'error' : undefined}
            help={invalid.includes(field.key) && field.kind === 'json' ? tr('setting.isNotAValidJson') : undefined}
            data-option={field.key}
          >
            {input(field)}
          </Form.Item>
        ))}
      </Form>
      <Space>
        {!section.immediate && (
          <Button type="primary" loading={saving} onClick={() => void save()}>
            {tr('setting.saveSection', { section: l(section.title) ?? '' })}
          </Button>
        )}
        {children}
      </Space>
      {section.immediate && (
        <Typography.Text type="secondary" className="aigw-option-hint">
          {lang === 'en-US' ? 'Switches save at once.' : tr('setting.switchesSaveAsSoonAs')}
        </Typography.Text>
      )}
    </Card>
  );
}
