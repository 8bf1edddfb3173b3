import { invalid } from '@aigw/common/errors';
import type { Log } from '@aigw/proto/logs/v1/logs';
import type { Request, Response, Router } from 'express';
import { ADMIN_COLUMNS, csvHead, csvRow, SELF_COLUMNS } from '../../../domain/log-csv.ts';
import type { RouteDeps } from '../deps.ts';
import { filterOf, forSelf, Query } from './log.ts';
import { snake } from './wire.ts';

/** Resolves when the response takes more (drain) or is gone (close); leaves no listener behind. */
function writable(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** The widest window of a user's own export (an admin's has none). */
const SELF_EXPORT_MAX_SECONDS = 31 * 24 * 3600;

/** An export may run for as long as a million rows take to download. */
const EXPORT_DEADLINE_MS = 60 * 60_000;

/**
 * GET /api/log/export (admins: the admin list's filters) and /api/log/self/export (the caller's
 * own logs, the /api/log/self filters): a CSV download streamed from the logs service's
 * ExportLogs. One chunk is in memory at a time: the next is read only when the response has taken
 * the last (its `drain`), and the gRPC stream's flow control holds the logs service's cursors back.
 */
export function logExportRoutes(api: Router, { clients, guard, logger }: RouteDeps): void {
  const stream = async (req: Request, res: Response, admin: boolean) => {
    const filter = filterOf(req, admin);
    // A user's export reads every log of the window's days (the rows have no index but the event
    // id): at most a month, as the user's own dashboard.
    const end = filter.endTimestamp || Math.floor(Date.now() / 1000);
    if (!admin && filter.startTimestamp && end - filter.startTimestamp > SELF_EXPORT_MAX_SECONDS) {
      throw invalid('时间跨度不能超过 1 个月');
    }
    const columns = admin ? ADMIN_COLUMNS : SELF_COLUMNS;
    const view = admin ? snake : (l: Log) => forSelf(snake(l));
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    const it = clients.logs
      .exportLogs({ filter }, { deadlineMs: EXPORT_DEADLINE_MS, signal: gone.signal })
      [Symbol.asyncIterator]();
    // The first chunk before the headers: a refused call still answers with the JSON error.
    let next = await it.next();
    const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
    res.status(200).set({
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="logs-${stamp}.csv"`,
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    });
    res.write(csvHead(columns));
    try {
      while (!next.done) {
        const text = next.value.items.map((l) => csvRow(columns, view(l))).join('');
        if (!res.write(text)) await writable(res);
        if (gone.signal.aborted) return;
        next = await it.next();
      }
      res.end();
    } catch (err) {
      // Headers are out: a cut-off download (no final chunk) tells the client it failed.
      if (!gone.signal.aborted) logger.warn({ err }, 'log export failed mid-stream');
      res.destroy();
    } finally {
      if (gone.signal.aborted) await it.return?.();
    }
  };

  api.get('/log/export', guard.admin, Query, async (req, res) => {
    await stream(req, res, true);
  });
  api.get('/log/self/export', guard.user, Query, async (req, res) => {
    await stream(req, res, false);
  });
}
