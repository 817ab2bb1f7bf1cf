/**
 * One-line descriptions of fanin's outputs, shared by the runtime's log, the dashboard, the CLI's
 * `tail` and the demos, so an aggregate reads the same wherever it shows up.
 */

/** An output message as it travels (the body of an output queue's message). */
export type OutputBody = Readonly<Record<string, unknown>> & { readonly id?: string; readonly type?: string };

/**
 * Milliseconds as a short human duration: `850 ms`, `1.2 s`, `2 min 5 s`, `1 h`, `3 d 4 h`. The
 * value is rounded to the smallest unit shown before it is split, so a part never reaches its
 * unit's size (`1 min`, never `60 s`; `1 h`, never `60 min`; `30 d`, never `29 d 24 h`).
 */
export function formatDuration(ms: number): string {
  if (Math.round(ms) < 1000) return `${Math.round(ms)} ms`;
  if (Math.round(ms / 100) < 600) return `${(ms / 1000).toFixed(1)} s`;
  const parts = (total: number, size: number, big: string, small: string): string => {
    const whole = Math.floor(total / size);
    const rest = total - whole * size;
    return rest === 0 ? `${whole} ${big}` : `${whole} ${big} ${rest} ${small}`;
  };
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return parts(seconds, 60, 'min', 's');
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1440) return parts(minutes, 60, 'h', 'min');
  return parts(Math.round(ms / 3_600_000), 24, 'd', 'h');
}

/** How long an aggregate was open, when the output says (`closedAt - openedAt`). */
export function latencyOf(body: OutputBody): number | undefined {
  const { openedAt, closedAt } = body;
  return typeof openedAt === 'number' && typeof closedAt === 'number' ? closedAt - openedAt : undefined;
}

/** A JSON value shortened to `max` characters. */
export function compact(value: unknown, max = 80): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The result part of an aggregate output, in a few words. */
export function describeResult(result: unknown): string {
  if (result === null || result === undefined) return 'no result';
  if (Array.isArray(result)) return `${result.length} repl${result.length === 1 ? 'y' : 'ies'} collected`;
  if (typeof result === 'object' && 'body' in result && 'replyId' in result) {
    const best = result as { replyId: unknown; body: unknown };
    return `best reply ${String(best.replyId)}: ${compact(best.body, 70)}`;
  }
  return compact(result);
}

/** One line describing any output (completed, timed-out, purged, late, unknown, error, status). */
export function describeOutput(body: OutputBody): string {
  const type = String(body.type ?? 'unknown type');
  const aggregate = `${String(body.definition ?? '?')} ${String(body.aggregateId ?? '?')}`;
  if (type.startsWith('fanin.aggregate.')) {
    const outcome = type.slice('fanin.aggregate.'.length);
    const counts = body.counts as { expected?: number | null; received?: number } | undefined;
    const received = counts ? `${counts.received ?? 0}/${counts.expected ?? '?'} replies` : '';
    const latency = latencyOf(body);
    const missing =
      Array.isArray(body.missing) && body.missing.length > 0 ? `, ${body.missing.length} missing` : '';
    // A definition with responders: how many recipients timed out, and how many were asked again.
    const fates = Array.isArray(body.recipients)
      ? (body.recipients as { fate?: string; retries?: number }[])
      : [];
    const timedOut = fates.filter((f) => f.fate === 'timed-out').length;
    const retried = fates.filter((f) => (f.retries ?? 0) > 0).length;
    const looked = `${timedOut > 0 ? `, ${timedOut} timed out` : ''}${retried > 0 ? `, ${retried} asked again` : ''}`;
    const reason = typeof body.reason === 'string' ? ` (${body.reason})` : '';
    const detail = outcome === 'purged' ? '' : `: ${describeResult(body.result)}`;
    const after = latency !== undefined ? ` after ${formatDuration(latency)}` : '';
    return `${outcome} ${aggregate}${after}${detail}${reason} [${received}${missing}${looked}]`;
  }
  switch (type) {
    case 'fanin.reply.late':
      return `late reply ${String(body.replyId)} to ${aggregate} (aggregate ${String(body.aggregateStatus)})`;
    case 'fanin.reply.unknown':
      return `unknown reply ${String(body.replyId)} to ${String(body.aggregateId)}: ${String(body.reason)}`;
    case 'fanin.error':
      return `error from ${String(body.source)}: ${String(body.reason)}`;
    case 'fanin.status.active': {
      const aggregates = Array.isArray(body.aggregates) ? body.aggregates.length : 0;
      return `active aggregates: ${aggregates}`;
    }
    case 'fanin.control.result': {
      const affected = Array.isArray(body.affected) ? ` affected ${body.affected.length}` : '';
      return `control ${String(body.command)}${affected}`;
    }
    default:
      return `${type} ${compact(body, 100)}`;
  }
}
