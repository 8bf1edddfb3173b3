import { Button, Card, Form, Input, Message, Spin } from '@arco-design/web-react';
import { useEffect, useState } from 'react';
import { useNavigate, useParams } from 'react-router-dom';
import { getSelf, type UserRecord, updateSelf } from '../../api/account.ts';
import { getUser } from '../../api/admin-user.ts';
import { useT } from '../../locale/index.tsx';
import { tr } from '../../locale/translate.ts';
import EditUserForm from '../user/edit-user-form.tsx';

/** The own profile: username and display name (the password lives in the personal settings). */
function SelfForm({ user }: { user: UserRecord }) {
  const navigate = useNavigate();
  const [form, setForm] = useState({ username: user.username, display_name: user.display_name });
  const submit = async () => {
    const res = await updateSelf(form);
    if (res.success) {
      Message.success(tr('user.userUpdated'));
      navigate('/setting');
    }
  };
  return (
    <Form layout="vertical" onSubmit={() => void submit()}>
      <Form.Item label={tr('common.username2')}>
        <Input
          name="username"
          value={form.username}
          maxLength={12}
          onChange={(v) => setForm((f) => ({ ...f, username: v }))}
        />
      </Form.Item>
      <Form.Item label={tr('user.displayName')}>
        <Input
          name="display_name"
          value={form.display_name}
          maxLength={20}
          onChange={(v) => setForm((f) => ({ ...f, display_name: v }))}
        />
      </Form.Item>
      <Button type="primary" htmlType="submit">
        {tr('common.submit')}
      </Button>
    </Form>
  );
}

/** /user/edit/:id (admins edit a user) and /user/edit (the own profile). */
export default function UserEditPage() {
  const t = useT();
  const navigate = useNavigate();
  const { id } = useParams();
  const [user, setUser] = useState<UserRecord | null>(null);

  useEffect(() => {
    const load = id ? getUser(Number(id)) : getSelf();
    void load.then((res) => res.success && res.data && setUser(res.data));
  }, [id]);

  return (
    <Card bordered={false} title={t(id ? 'route.userEdit' : 'route.userEditSelf')} style={{ maxWidth: 560 }}>
      {!user ? (
        <Spin />
      ) : id ? (
        <EditUserForm user={user} onSaved={() => navigate('/user')} onCancel={() => navigate('/user')} />
      ) : (
        <SelfForm user={user} />
      )}
    </Card>
  );
}
