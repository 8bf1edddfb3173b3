import { Button, Form, Input, Select } from '@arco-design/web-react';
import { IconSearch } from '@arco-design/web-react/icon';
import { useEffect, useState } from 'react';
import { listGroups } from '../../api/admin-user.ts';
import { tr } from '../../locale/translate.ts';

/** A channel search: id or name keyword, group, model keyword ('' for none). */
export interface ChannelQuery {
  keyword: string;
  group: string;
  model: string;
}

export const NO_QUERY: ChannelQuery = { keyword: '', group: '', model: '' };

/** The query of the filter fields as typed (keywords trimmed, a cleared field empty). */
export const queryOf = (v: Partial<ChannelQuery>): ChannelQuery => ({
  keyword: (v.keyword ?? '').trim(),
  group: v.group ?? '',
  model: (v.model ?? '').trim(),
});

/** Whether a query filters at all (otherwise the plain list is asked for). */
export const isSearch = (q: ChannelQuery) => q.keyword !== '' || q.group !== '' || q.model !== '';

/** The search by id or name, model keyword and group. */
export function ChannelFilterBar({ onSearch }: { onSearch: (query: ChannelQuery) => void }) {
  const [groups, setGroups] = useState<string[]>([]);
  useEffect(() => {
    void listGroups().then((res) => res.success && setGroups(res.data ?? []));
  }, []);
  return (
    <Form layout="inline" onSubmit={(v: Partial<ChannelQuery>) => onSearch(queryOf(v))} style={{ marginBottom: 16 }}>
      <Form.Item field="keyword">
        <Input
          name="keyword"
          prefix={<IconSearch />}
          placeholder={tr('channel.searchChannelsByIdName')}
          style={{ width: 300 }}
          allowClear
        />
      </Form.Item>
      <Form.Item field="model">
        <Input name="model" placeholder={tr('channel.modelKeyword')} style={{ width: 160 }} allowClear />
      </Form.Item>
      <Form.Item field="group">
        <Select placeholder={tr('common.selectAGroup')} allowClear style={{ width: 140 }}>
          {groups.map((g) => (
            <Select.Option key={g} value={g}>
              {g}
            </Select.Option>
          ))}
        </Select>
      </Form.Item>
      <Form.Item>
        <Button type="primary" htmlType="submit">
          {tr('common.search')}
        </Button>
      </Form.Item>
    </Form>
  );
}
