import {
  Button,
  Card,
  Form,
  Input,
  Message,
  Modal,
  Popconfirm,
  Select,
  Space,
  Switch,
  Table,
  Tag,
  Typography,
} from '@arco-design/web-react';
import { useCallback, useEffect, useState } from 'react';
import {
  type CustomOAuthProvider,
  createCustomOAuth,
  deleteCustomOAuth,
  discoverCustomOAuth,
  listCustomOAuth,
  updateCustomOAuth,
} from '../../api/sso.ts';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';

type Draft = Partial<CustomOAuthProvider>;

/** New providers start with new-api's defaults (OIDC claim names). */
const EMPTY: Draft = {
  enabled: true,
  scopes: 'openid profile email',
  user_id_field: 'sub',
  username_field: 'preferred_username',
  display_name_field: 'name',
  email_field: 'email',
  auth_style: 0,
};

const TEXT_FIELDS = [
  ['name', 'sso.customName', true],
  ['slug', 'sso.customSlug', true],
  ['client_id', 'sso.customClientId', true],
  ['authorization_endpoint', 'sso.customAuthorizationEndpoint', true],
  ['token_endpoint', 'sso.customTokenEndpoint', true],
  ['user_info_endpoint', 'sso.customUserInfoEndpoint', true],
  ['scopes', 'sso.customScopes', false],
  ['user_id_field', 'sso.customUserIdField', false],
  ['username_field', 'sso.customUsernameField', false],
  ['display_name_field', 'sso.customDisplayNameField', false],
  ['email_field', 'sso.customEmailField', false],
  ['icon', 'sso.customIcon', false],
] as const;

/**
 * System settings: the custom OAuth providers (root only; new-api's /api/custom-oauth-provider).
 * The client secret is write-only: left empty on edit, the stored one is kept.
 */
export default function CustomOAuthCard() {
  const t = useT();
  const { reload } = useStatus();
  const [rows, setRows] = useState<CustomOAuthProvider[]>([]);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [saving, setSaving] = useState(false);

  const load = useCallback(async () => {
    const res = await listCustomOAuth();
    if (res.success && res.data) setRows(res.data);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const save = async () => {
    if (!draft) return;
    setSaving(true);
    const res = draft.id ? await updateCustomOAuth(draft.id, draft) : await createCustomOAuth(draft);
    setSaving(false);
    if (!res.success) return;
    Message.success(t('sso.customSaved'));
    setDraft(null);
    void load();
    void reload();
  };

  const remove = async (id: number) => {
    const res = await deleteCustomOAuth(id);
    if (!res.success) return;
    void load();
    void reload();
  };

  const set = (patch: Draft) => setDraft((d) => ({ ...d, ...patch }));

  /** Fills the three endpoints from the provider's discovery document. */
  const discover = async () => {
    const res = await discoverCustomOAuth(draft?.well_known ?? '');
    if (!res.success || !res.data) return;
    const d = res.data.discovery;
    set({
      well_known: res.data.well_known_url,
      authorization_endpoint: d.authorization_endpoint,
      token_endpoint: d.token_endpoint,
      user_info_endpoint: d.userinfo_endpoint,
    });
    Message.success(t('sso.customDiscovered'));
  };

  return (
    <Card title={t('opt.customOauth')} bordered={false} data-card="custom-oauth">
      <Typography.Paragraph type="secondary">{t('sso.customHint')}</Typography.Paragraph>
      <Table
        rowKey="id"
        data={rows}
        pagination={false}
        columns={[
          { title: t('sso.customName'), dataIndex: 'name' },
          { title: t('sso.customSlug'), dataIndex: 'slug' },
          {
            title: t('sso.customEnabled'),
            dataIndex: 'enabled',
            render: (on: boolean) => <Tag color={on ? 'green' : 'gray'}>{on ? t('sso.on') : t('sso.off')}</Tag>,
          },
          {
            title: '',
            dataIndex: 'id',
            render: (_: unknown, row: CustomOAuthProvider) => (
              <Space>
                <Button size="small" onClick={() => setDraft({ ...row, client_secret: '' })}>
                  {t('sso.edit')}
                </Button>
                <Popconfirm title={t('sso.customDeleteConfirm')} onOk={() => void remove(row.id)}>
                  <Button size="small" status="danger">
                    {t('sso.delete')}
                  </Button>
                </Popconfirm>
              </Space>
            ),
          },
        ]}
      />
      <Button type="primary" style={{ marginTop: 12 }} onClick={() => setDraft({ ...EMPTY })}>
        {t('sso.customAdd')}
      </Button>
      <Modal
        title={draft?.id ? t('sso.customEditTitle') : t('sso.customAdd')}
        visible={draft !== null}
        onOk={() => void save()}
        confirmLoading={saving}
        onCancel={() => setDraft(null)}
        style={{ width: 640 }}
      >
        {draft && (
          <Form layout="vertical">
            <Form.Item label={t('sso.customEnabled')}>
              <Switch checked={Boolean(draft.enabled)} onChange={(on) => set({ enabled: on })} />
            </Form.Item>
            <Form.Item label={t('sso.customWellKnown')}>
              <Input.Search
                value={draft.well_known ?? ''}
                onChange={(v) => set({ well_known: v })}
                searchButton={t('sso.customDiscover')}
                onSearch={() => void discover()}
                data-field="well_known"
              />
            </Form.Item>
            {TEXT_FIELDS.map(([key, label, required]) => (
              <Form.Item key={key} label={t(label)} required={required}>
                <Input value={String(draft[key] ?? '')} onChange={(v) => set({ [key]: v })} data-field={key} />
              </Form.Item>
            ))}
            <Form.Item label={t('sso.customClientSecret')} required={!draft.id}>
              <Input.Password
                value={draft.client_secret ?? ''}
                placeholder={draft.id ? t('sso.customSecretKeep') : ''}
                onChange={(v) => set({ client_secret: v })}
              />
            </Form.Item>
            <Form.Item label={t('sso.customAuthStyle')}>
              <Select value={draft.auth_style ?? 0} onChange={(v: number) => set({ auth_style: v })}>
                <Select.Option value={0}>{t('sso.authStyleAuto')}</Select.Option>
                <Select.Option value={1}>{t('sso.authStyleParams')}</Select.Option>
                <Select.Option value={2}>{t('sso.authStyleHeader')}</Select.Option>
              </Select>
            </Form.Item>
          </Form>
        )}
      </Modal>
    </Card>
  );
}
