import type { DefinitionInput } from '../shared/engine/definition.ts';
import { parseDefinitions } from '../shared/engine/definition.ts';
import { idOf, type Ledger, type Publication, type SentInput } from './ledger.ts';

/**
 * The properties every run must keep, checked on its ledger once it reached quiescence
 * (docs/guarantees.md names the guarantee each one proves):
 *
 * - `one-result`: every copy of an aggregate's result (`<id>/result`), on every channel (its
 *   queue, the bus) and every retry, is byte-identical: at most one terminal output ever;
 * - `result-after-quiescence`: every aggregate that opened has its result once time has run past
 *   every deadline and lease (every aggregate has a deadline: its `maxOpenSeconds` at least);
 * - `members-sent`: a result's members (and failures) are replies sent for that aggregate, with a
 *   body one of them was sent with, each reply id once;
 * - `one-definition`: an aggregate's sub-requests and its result name one definition, and what
 *   completed it is something that definition's strategy can do;
 * - `nothing-lost`: every reply sent is in its aggregate's result, or in a late, unknown or error
 *   output; every request opened an aggregate or is in an error output;
 * - `no-dead-letters`: nothing ends in a DLQ (a refused input goes to the error output instead);
 * - `reasons`: every error, late and unknown output, and every failed result, says why;
 * - `all-arrived-completes`: an aggregate waiting for all its replies, whose replies were all sent
 *   long before its deadline, is not timed out at it.
 */
export interface Violation {
  readonly invariant: string;
  readonly aggregateId?: string;
  readonly detail: string;
}

type Output = Record<string, unknown> & { id: string; type: string };

const TERMINAL = new Set([
  'fanin.aggregate.completed',
  'fanin.aggregate.timed-out',
  'fanin.aggregate.purged',
  'fanin.aggregate.failed',
]);

/** What completes an aggregate of each strategy (besides deadline, external, purge, failures). */
const COMPLETED_BY: Record<string, readonly string[]> = {
  all: ['all-arrived'],
  count: ['count', 'all-arrived'],
  first: ['first', 'all-arrived'],
  timeout: ['all-arrived'],
  override: ['threshold', 'all-arrived'],
  external: [],
  predicate: ['predicate'],
  any: ['count', 'predicate', 'threshold', 'all-arrived'],
};
const ALWAYS = ['deadline', 'external', 'purge', 'failures'];

/** How long a sent reply may take to be recorded, crashes and redeliveries included. */
const SETTLE_MS = 15 * 60 * 1000;

/** Checks every invariant on a finished run's ledger. */
export function checkInvariants(ledger: Ledger, definitionInputs: readonly DefinitionInput[]): Violation[] {
  const definitions = parseDefinitions(definitionInputs);
  const violations: Violation[] = [];
  const fail = (invariant: string, detail: string, aggregateId?: string) =>
    violations.push({ invariant, detail, ...(aggregateId !== undefined ? { aggregateId } : {}) });
  const outputs = ledger.publications.map((p) => ({ p, o: parse(p.text) }));
  const results = new Map<string, { copies: Publication[]; output: Output }>();
  for (const { p, o } of outputs) {
    if (o === undefined) continue;
    if (TERMINAL.has(o.type) && o.id.endsWith('/result')) {
      // The output names its aggregate; the id holds it percent-encoded (engine/output-ids.ts).
      const aggregateId =
        typeof o.aggregateId === 'string' ? o.aggregateId : o.id.slice(0, -'/result'.length);
      const entry = results.get(aggregateId) ?? { copies: [], output: o };
      entry.copies.push(p);
      results.set(aggregateId, entry);
    }
    const needsReason =
      o.type === 'fanin.error' ||
      o.type === 'fanin.reply.late' ||
      o.type === 'fanin.reply.unknown' ||
      o.type === 'fanin.aggregate.failed';
    if (needsReason && (typeof o.reason !== 'string' || o.reason.length === 0)) {
      fail('reasons', `${o.type} ${o.id} has no reason`, aggregateIdOf(o));
    }
  }
  // one-result: byte-identical copies (a bus copy stripped for size carries a payload pointer).
  for (const [aggregateId, { copies }] of results) {
    const texts = new Set(copies.filter((c) => !c.text.includes('"payloadPointer"')).map((c) => c.text));
    if (texts.size > 1) {
      const shown = [...texts].map((t) => t.slice(0, 400)).join('\n  vs ');
      fail(
        'one-result',
        `${texts.size} different results on ${copies.map((c) => c.channel).join(',')}:\n  ${shown}`,
        aggregateId,
      );
    }
  }
  const sentTo = groupBy(
    ledger.inputs.filter((i) => i.kind === 'reply' && i.aggregateId !== undefined),
    (i) => i.aggregateId as string,
  );
  const errored = new Set<string>();
  const lateOrUnknown = new Set<string>();
  for (const { o } of outputs) {
    if (o === undefined) continue;
    const message = o.message as { messageId?: string } | undefined;
    if (o.type === 'fanin.error' && message?.messageId) errored.add(message.messageId);
    if (
      (o.type === 'fanin.reply.late' || o.type === 'fanin.reply.unknown') &&
      typeof o.aggregateId === 'string'
    ) {
      lateOrUnknown.add(`${o.aggregateId}\u0000${String(o.replyId)}`);
      if (message?.messageId) errored.add(message.messageId);
    }
  }
  // members-sent, one-definition, all-arrived-completes.
  for (const [aggregateId, { output }] of results) {
    const sent = sentTo.get(aggregateId) ?? [];
    const definition = definitions.get(String(output.definition));
    const members =
      Array.isArray(output.result) && definition?.aggregation.algorithm === 'collect'
        ? (output.result as { replyId: string; body: unknown }[])
        : [];
    const failures = Array.isArray(output.failures)
      ? (output.failures as { replyId: string; body: unknown }[])
      : [];
    const seen = new Set<string>();
    for (const member of [...members, ...failures]) {
      if (seen.has(member.replyId))
        fail('members-sent', `reply ${member.replyId} is in the result twice`, aggregateId);
      seen.add(member.replyId);
      const bodies = sent.filter((s) => s.replyId === member.replyId).map((s) => canonical(s.body));
      if (!bodies.includes(canonical(member.body))) {
        fail(
          'members-sent',
          `reply ${member.replyId} with body ${JSON.stringify(member.body).slice(0, 200)} was not sent for this aggregate`,
          aggregateId,
        );
      }
    }
    // The member set is fixed at the seal: a member delivered again is a duplicate, never late;
    // and a reply is counted or reported unknown, never both.
    for (const member of [...members, ...failures]) {
      if (lateOrUnknown.has(`${aggregateId}\u0000${member.replyId}`)) {
        fail(
          'members-sent',
          `reply ${member.replyId} is in the result and was also published late or unknown`,
          aggregateId,
        );
      }
    }
    if (definition !== undefined) {
      const strategy = definition.completion.strategy;
      const allowed = [...(COMPLETED_BY[strategy] ?? []), ...ALWAYS];
      if (typeof output.completedBy === 'string' && !allowed.includes(output.completedBy)) {
        fail(
          'one-definition',
          `completed by ${output.completedBy}, which strategy ${strategy} of ${definition.name} cannot do`,
          aggregateId,
        );
      }
    }
    const dispatched = new Set(
      ledger.subRequests.filter((s) => s.aggregateId === aggregateId).map((s) => s.definition),
    );
    dispatched.add(String(output.definition));
    if (dispatched.size > 1)
      fail('one-definition', `sub-requests and result name ${[...dispatched].join(' and ')}`, aggregateId);
    if (output.completedBy === 'deadline' && definition !== undefined && waitsForAll(definition.completion)) {
      const expected = (output.counts as { expected?: number } | undefined)?.expected ?? 0;
      const closedAt = Number(output.closedAt);
      const ids = new Set(sent.filter((s) => s.at + SETTLE_MS < closedAt).map((s) => s.replyId));
      const early = Array.from({ length: expected }, (_, i) => String(i)).every((id) => ids.has(id));
      const tolerated = Number(definition.toleratedFailureCount ?? 0) >= 0;
      if (expected > 0 && early && tolerated && closedAt - Number(output.openedAt) > SETTLE_MS) {
        fail(
          'all-arrived-completes',
          `all ${expected} replies were sent long before the deadline, yet it timed out`,
          aggregateId,
        );
      }
    }
  }
  // nothing-lost: replies.
  for (const [aggregateId, sent] of sentTo) {
    const result = results.get(aggregateId)?.output;
    const missing = new Set(
      ((result?.missing as { replyId: string }[] | undefined) ?? []).map((m) => m.replyId),
    );
    const closedAt = Number(result?.closedAt ?? Number.POSITIVE_INFINITY);
    const definition = definitions.get(String(result?.definition ?? sent[0]?.definition));
    const byReply = groupBy(sent, (s) => s.replyId ?? '');
    for (const [replyId, copies] of byReply) {
      if (copies.some((c) => errored.has(c.messageId))) continue;
      if (lateOrUnknown.has(`${aggregateId}\u0000${replyId}`)) continue;
      if (result === undefined) {
        if (!ledger.stuck.has(aggregateId))
          fail('nothing-lost', `reply ${replyId} is in no output (its aggregate has no result)`, aggregateId);
        continue;
      }
      if (definition?.latePolicy === 'discard') continue;
      const recordedBeforeClose = copies.some((c) => c.at + SETTLE_MS < closedAt);
      if (missing.has(replyId) && recordedBeforeClose) {
        fail(
          'nothing-lost',
          `reply ${replyId} was sent long before the close, yet the result lists it missing`,
          aggregateId,
        );
      }
      const members = Array.isArray(result.result) && definition?.aggregation.algorithm === 'collect';
      if (members && recordedBeforeClose && !missing.has(replyId)) {
        const inResult = [
          ...(result.result as { replyId: string }[]),
          ...((result.failures as { replyId: string }[]) ?? []),
        ].some((m) => m.replyId === replyId);
        if (!inResult && result.outcome !== 'purged' && result.completedBy !== 'failures') {
          fail('nothing-lost', `reply ${replyId} is neither in the result nor late`, aggregateId);
        }
      }
    }
  }
  // nothing-lost: requests; result-after-quiescence.
  for (const request of ledger.inputs.filter((i) => i.kind === 'request')) {
    if (errored.has(request.messageId)) continue;
    const aggregateId = request.aggregateId;
    if (aggregateId !== undefined && !results.has(aggregateId)) {
      const why = ledger.stuck.has(aggregateId)
        ? 'the sweeper could not end it'
        : 'no result and no error output';
      fail(
        'result-after-quiescence',
        `request ${request.messageId} (${request.definition}): ${why}`,
        aggregateId,
      );
    }
  }
  for (const aggregateId of ledger.stuck) {
    if (!results.has(aggregateId))
      fail('result-after-quiescence', 'overdue sweep after sweep, never ended', aggregateId);
  }
  if (ledger.hung.length > 0) fail('quiescence', `invocations that never ended: ${ledger.hung.join(', ')}`);
  for (const queue of ledger.leftover) {
    fail('quiescence', `${queue.count} message(s) still on ${queue.queue} when nothing was left to run`);
  }
  for (const letter of ledger.deadLetters) {
    fail(
      'no-dead-letters',
      `${letter.queue}: ${letter.body.slice(0, 300)}`,
      letter.attributes['fanin-aggregate-id'],
    );
  }
  return dedupe(violations);
}

function waitsForAll(completion: { strategy: string; completeWhenAllArrived?: boolean }): boolean {
  return (
    completion.strategy === 'all' ||
    (completion.strategy === 'timeout' && completion.completeWhenAllArrived === true)
  );
}

function parse(text: string): Output | undefined {
  if (idOf(text) === undefined) return undefined;
  return JSON.parse(text) as Output;
}

function aggregateIdOf(o: Output): string | undefined {
  return typeof o.aggregateId === 'string' ? o.aggregateId : undefined;
}

/** A JSON text in one spelling, so two copies of one value compare equal. */
function canonical(value: unknown): string {
  const parsed = typeof value === 'string' ? safeParse(value) : value;
  return JSON.stringify(sortKeys(parsed));
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = map.get(k) ?? [];
    list.push(item);
    map.set(k, list);
  }
  return map;
}

function dedupe(violations: Violation[]): Violation[] {
  const seen = new Set<string>();
  return violations.filter((v) => {
    const key = `${v.invariant}|${v.aggregateId}|${v.detail}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export type { SentInput };
