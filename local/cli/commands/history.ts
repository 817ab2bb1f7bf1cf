import type { History, HistoryEvent } from '../../../shared/engine/history.ts';
import { aggregateHistory } from '../../../shared/use-cases/history.ts';
import { type Command, CommandError, UsageError } from '../io.ts';
import { storeOf } from '../shared.ts';
import * as specs from '../specs.ts';

/**
 * `fanin history <aggregate-id>`: the timeline of one aggregate from what the state table keeps
 * of it (shared/use-cases/history.ts), read-only, locally or with `--stack`. Text by default,
 * the whole {@link History} with `--json` (every epoch time with its ISO 8601 beside it).
 */
export const history: Command = {
  ...specs.history,
  async run(io, args) {
    const aggregateId = args.positionals[0];
    if (!aggregateId) throw new UsageError('history needs an aggregate id');
    const target = await io.target();
    const found = await aggregateHistory(storeOf(target), aggregateId, {
      ...(target.definitions ? { definitions: target.definitions } : {}),
    });
    if (found.status === 'not found') {
      if (io.wantsJson) io.json(found);
      throw new CommandError(
        `no aggregate "${aggregateId}" in table ${target.tableName}: it was never opened, or its tombstone has expired (a closed aggregate's history lives as long as its tombstone)`,
      );
    }
    if (io.wantsJson) {
      io.json(found);
      return 0;
    }
    for (const line of historyLines(found, target.definitions)) io.out(line);
    return 0;
  },
};

/** The timeline as text: a summary line, one line per event, then what the items cannot tell. */
export function historyLines(found: History, definitions?: ReadonlyMap<string, unknown>): string[] {
  const lines: string[] = [summaryOf(found)];
  if (found.definition && definitions && !definitions.has(found.definition)) {
    lines.push(
      `(definition "${found.definition}" is not in this runtime's configuration: recipients and policies it names are not shown)`,
    );
  }
  const opened = found.events.find((e) => e.kind === 'opened')?.occurredAt;
  const width = Math.max(...found.events.map((e) => e.kind.length), 6);
  for (const event of found.events) lines.push(eventLine(event, opened, width));
  if (found.cannotTell.length > 0) {
    lines.push('what the stored items cannot tell:');
    for (const gap of found.cannotTell) lines.push(`  - ${gap}`);
  }
  return lines;
}

function summaryOf(found: History): string {
  const state =
    found.status === 'not opened'
      ? 'not opened yet'
      : `${found.status}${found.outcome ? ` (${found.outcome}${found.completedBy ? ` by ${found.completedBy}` : ''})` : ''}`;
  const counts =
    found.status === 'not opened'
      ? ''
      : `, ${found.replies} of ${found.expected ?? '?'} replies recorded, ${found.late} late`;
  const kept =
    found.expiresAt !== undefined
      ? `; history kept until ${new Date(found.expiresAt * 1000).toISOString()} (its tombstone)`
      : '';
  return `aggregate ${found.aggregateId}${found.definition ? ` (${found.definition})` : ''}: ${state}${counts}${kept}`;
}

/** `2026-…Z  +1.234s  reply   reply 1 from bank-2 recorded …`; an event with no stored time shows dashes. */
function eventLine(event: HistoryEvent, opened: number | undefined, width: number): string {
  const time = event.occurredAt !== undefined ? new Date(event.occurredAt).toISOString() : '-'.repeat(24);
  const offset =
    event.occurredAt !== undefined && opened !== undefined ? signed((event.occurredAt - opened) / 1000) : '';
  return `${time}  ${offset.padStart(10)}  ${event.kind.padEnd(width)}  ${event.text}`;
}

function signed(seconds: number): string {
  return `${seconds < 0 ? '-' : '+'}${Math.abs(seconds).toFixed(3)}s`;
}
