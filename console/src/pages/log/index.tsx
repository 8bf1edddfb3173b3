import { Card, Space, Table } from '@arco-design/web-react';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { type LogEntry, type LogFilters, type LogStat, listLogs, logStat } from '../../api/log.ts';
import type { Status } from '../../api/types.ts';
import { usePagedList } from '../../hooks/use-paged-list.ts';
import { useIsMobile } from '../../layout/use-mobile.ts';
import { isAdmin } from '../../store/roles.ts';
import { useStatus } from '../../store/status-context.tsx';
import { useUser } from '../../store/user-context.tsx';
import { renderQuota } from '../../utils/format.ts';
import { logColumns } from './log-columns.tsx';
import { LogDetails } from './log-details.tsx';
import { type FilterForm, filtersOf, LogFilterBar } from './log-filter-bar.tsx';
import { pageSizeOf, savePageSize, todayStart } from './log-rules.ts';
import { UserSummaryModal, useUserSummary } from './user-summary.tsx';
import './style/index.css';
import { tr } from '../../locale/translate.ts';

/** The totals of the searched filters (quota used, RPM, TPM) and whether they are loading. */
function useLogStat(admin: boolean, filters: LogFilters) {
  const [stat, setStat] = useState<LogStat>({ quota: 0, rpm: 0, tpm: 0 });
  const [loading, setLoading] = useState(false);
  const load = useCallback(async () => {
    setLoading(true);
    const res = await logStat(admin, filters);
    setLoading(false);
    if (res.success && res.data) setStat(res.data);
  }, [admin, filters]);
  useEffect(() => {
    void load();
  }, [load]);
  return { stat, loading };
}

/** The card's title: quota used, RPM and TPM of the searched filters. */
function LogStatLine({ stat, loading, status }: { stat: LogStat; loading: boolean; status: Status }) {
  return (
    <Space size="large" wrap className="aigw-log-stat">
      <span>
        {tr('log.quotaUsed')}
        <b>{loading ? '…' : renderQuota(stat.quota, status)}</b>
      </span>
      <span>
        {tr('log.rpm')}
        <b>{stat.rpm}</b>
      </span>
      <span>
        {tr('log.tpm')}
        <b>{stat.tpm}</b>
      </span>
    </Space>
  );
}

/** 日志: totals, filters, a type selector and a paged table with expandable rows (spec 02). */
export default function LogPage() {
  const { user } = useUser();
  const { status } = useStatus();
  const admin = isAdmin(user);
  const mobile = useIsMobile();
  const [initialForm] = useState<FilterForm>(() => ({
    token_name: '',
    model_name: '',
    username: '',
    channel: '',
    range: [todayStart(), Math.floor(Date.now() / 1000) + 3600],
    type: 0,
  }));
  const list = usePagedList<LogEntry, FilterForm>({
    initialQuery: initialForm,
    initialPageSize: pageSizeOf,
    onPageSizeChange: savePageSize,
    fetch: (q, page, pageSize) => listLogs(admin, filtersOf(q, admin), page, pageSize),
    deps: [admin],
  });
  const filters = useMemo(() => filtersOf(list.query, admin), [list.query, admin]);
  const { stat, loading: statLoading } = useLogStat(admin, filters);
  const summary = useUserSummary();
  const columns = logColumns({ admin, mobile, status, onUser: (id) => void summary.open(id) });

  return (
    <Card className="aigw-log" title={<LogStatLine stat={stat} loading={statLoading} status={status} />}>
      <LogFilterBar admin={admin} mobile={mobile} initial={initialForm} searched={filters} onSearch={list.search} />
      <Table
        rowKey="id"
        loading={list.loading}
        columns={columns}
        data={list.rows}
        className="aigw-log-table"
        // The fixed widths plus 200 px of details: at 1440 px the whole row fits, cost and details
        // included; narrower screens scroll sideways.
        scroll={{ x: columns.reduce((sum, c) => sum + Number(c.width ?? 0), 40 + (mobile ? 0 : 200)) }}
        expandedRowRender={(r) => <LogDetails log={r} admin={admin} />}
        pagination={list.pagination}
      />
      <UserSummaryModal summary={summary.summary} status={status} onClose={summary.close} />
    </Card>
  );
}
