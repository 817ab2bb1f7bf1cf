import type { Definition, DefinitionInput } from '../shared/engine/definition.ts';
import { parseDefinitions } from '../shared/engine/definition.ts';
import {
  canonical,
  groupBy,
  idOf,
  type Ledger,
  type Publication,
  type ReplyEvent,
  type SentInput,
} from './ledger.ts';
import { checkResponders } from './responder-invariants.ts';

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
 *   long before its deadline, is not timed out at it;
 * - `no-member-after-deadline`: every member of a result was received while its aggregate did
 *   not exist yet, or at or before the deadline in force then; received is the earliest of its
 *   copies' `SentTimestamp` (when SQS accepted each, from the event source's batch as from a
 *   drain's receive) and its first delivery to a reply invocation, by that invocation's clock
 *   (see {@link lateMembers});
 * - `condition-decides`: an aggregate of strategy all, count or first whose condition held on the
 *   replies recorded before the deadline in force when the last of them was recorded is not timed
 *   out (its rule decides the outcome), nor, when it held long before that deadline (longer than
 *   a reply may take to settle), decided only when the deadline came;
 * - `own-request`: a result built from its stored request (a custom aggregation reading
 *   `request.body.tag`) shows a request that was sent for that aggregate and not refused;
 * - `published-once`: a result is published on a channel more than once only when a fault touched
 *   one of the invocations that published it there (a crash, a failed or timed-out call, a pause
 *   past the lease): with none, its owner publishes it once and nobody else does;
 * - `count-members`: a result completed by `first` holds one successful reply, and one completed
 *   by `count` exactly its count of them (the request's `parameters.count`, else the rule's): the
 *   seal takes the first N in recorded order, and the others are late;
 * - `recorded-once`: no put replaces a recorded reply or pack (each is written once, so a
 *   duplicate never changes what was recorded);
 * - `cancel-after-result`: every cancellation notice was sent after its aggregate's terminal
 *   output had been published (never before it, never for an aggregate without one);
 * - `cancel-unanswered`: a notice goes only to a recipient asked and unanswered at the seal: its
 *   definition cancels, a sub-request with its reply id was sent to that same queue (or, a fan-out
 *   having crashed between marking it asked and sending it, the result does not say it was never
 *   asked), no reply of it was stored while the aggregate was open, it is no member of the result;
 *   and a recipient gets two notices only when a fault touched an invocation that sent one;
 * - the responder invariants of sim/responder-invariants.ts (`retry-same`, `retry-bounded`,
 *   `retry-unanswered`, `retry-before-seal`, `heartbeat-not-member`, `recipient-deadline`).
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
/**
 * How long before its deadline a condition must have held for `condition-decides`: the deadline's
 * own handler reads the set after that (a put taking effect in the last instant before it may be
 * read or not, by the clocks' skews).
 */
const DECIDES_MARGIN_MS = 1000;

/**
 * Invariants checked only when asked (`--pending`): each states a guarantee whose product fix is
 * not in yet, so that seeds breaking it do not fail every run meanwhile. None today:
 * `no-member-after-deadline` is checked since the reply path enforces a lost timer's deadline.
 */
export const PENDING_INVARIANTS: ReadonlySet<string> = new Set<string>();

/** Checks every invariant on a finished run's ledger (the pending ones too with `pending`). */
export function checkInvariants(
  ledger: Ledger,
  definitionInputs: readonly DefinitionInput[],
  options: { readonly pending?: boolean } = {},
): Violation[] {
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
    const sentBodies = groupBy(sent, (s) => s.replyId ?? '');
    const seen = new Set<string>();
    for (const member of [...members, ...failures]) {
      if (seen.has(member.replyId))
        fail('members-sent', `reply ${member.replyId} is in the result twice`, aggregateId);
      seen.add(member.replyId);
      const bodies = (sentBodies.get(member.replyId) ?? []).map((s) => canonical(s.body));
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
      // Recipients with deadlines of their own settle as timed out: all may then be settled.
      const own = definition.responders?.timeoutSeconds ?? definition.responders?.timeouts;
      if (own !== undefined)
        allowed.push(...(allowed.includes('all-arrived') ? ['all-settled'] : []), 'responders-settled');
      if (typeof output.completedBy === 'string' && !allowed.includes(output.completedBy)) {
        fail(
          'one-definition',
          `completed by ${output.completedBy}, which strategy ${strategy} of ${definition.name} cannot do`,
          aggregateId,
        );
      }
    }
    // count-members: a count decision seals exactly its count of successful replies.
    if (
      definition !== undefined &&
      output.outcome === 'completed' &&
      (output.completedBy === 'first' || output.completedBy === 'count')
    ) {
      const wanted =
        output.completedBy === 'first'
          ? 1
          : (requestedCount(ledger, aggregateId) ?? countRuleCount(definition.completion));
      const counts = output.counts as { received?: number; failed?: number } | undefined;
      const successes = Number(counts?.received ?? 0) - Number(counts?.failed ?? 0);
      if (wanted !== undefined && successes !== wanted)
        fail(
          'count-members',
          `completed by ${output.completedBy} with ${successes} successful members, not ${wanted}`,
          aggregateId,
        );
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
  // no-member-after-deadline, condition-decides, own-request.
  const recordings = groupBy(ledger.recordings, (e) => e.aggregateId);
  const storedBy = groupBy(ledger.stored, (e) => e.aggregateId);
  for (const [aggregateId, { output }] of results) {
    const definition = definitions.get(String(output.definition));
    const members =
      Array.isArray(output.result) && definition?.aggregation.algorithm === 'collect'
        ? (output.result as { replyId: string }[])
        : [];
    const failures = Array.isArray(output.failures) ? (output.failures as { replyId: string }[]) : [];
    for (const late of lateMembers(
      [...members, ...failures].map((m) => m.replyId),
      ledger.receipts.filter((e) => e.aggregateId === aggregateId),
      recordings.get(aggregateId) ?? [],
    )) {
      fail(
        'no-member-after-deadline',
        `reply ${late.replyId.slice(0, 40)} is a member, yet it was received at ${late.clock}, ${late.clock - late.inForce} ms after the deadline then in force (${late.inForce})`,
        aggregateId,
      );
    }
    const decidedBy = String(output.completedBy);
    const held =
      definition !== undefined && decidedBy !== 'purge' && decidedBy !== 'external'
        ? conditionHeldAt(definition, recordings.get(aggregateId) ?? [])
        : undefined;
    if (held?.deadline !== undefined && definition !== undefined) {
      if (decidedBy === 'deadline' && held.clock + DECIDES_MARGIN_MS < held.deadline) {
        fail(
          'condition-decides',
          `its ${definition.completion.strategy} condition held on replies recorded by ${held.clock}, ${held.deadline - held.clock} ms before its deadline, yet it timed out`,
          aggregateId,
        );
      }
    }
    // Every reply stored counts here, a put whose caller crashed after it too: it is redelivered
    // and read again long before a deadline that lies more than SETTLE_MS after it.
    const stored =
      definition !== undefined && decidedBy !== 'purge' && decidedBy !== 'external'
        ? conditionHeldAt(definition, storedBy.get(aggregateId) ?? [])
        : undefined;
    if (stored?.deadline !== undefined && definition !== undefined) {
      if (
        stored.clock + SETTLE_MS < stored.deadline &&
        Number(output.closedAt) >= stored.deadline - DECIDES_MARGIN_MS
      ) {
        // Decided (by its rule, or timed out) only when its deadline came: nothing saw it hold.
        fail(
          'condition-decides',
          `its ${definition.completion.strategy} condition held on replies stored by ${stored.clock}, ${stored.deadline - stored.clock} ms before its deadline, yet it was decided only when its deadline came (${decidedBy}, closed at ${String(output.closedAt)})`,
          aggregateId,
        );
      }
    }
    const tag = (output.result as { tag?: unknown } | undefined)?.tag;
    if (typeof tag === 'string') {
      const own = ledger.inputs.some(
        (i) =>
          i.kind === 'request' &&
          i.aggregateId === aggregateId &&
          !errored.has(i.messageId) &&
          tagOf(i.body) === tag,
      );
      if (!own)
        fail(
          'own-request',
          `its result reads request ${tag.slice(0, 80)}, which was refused or never sent for it`,
          aggregateId,
        );
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
    let memberIds: Set<string> | undefined;
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
        memberIds ??= new Set(
          [
            ...(result.result as { replyId: string }[]),
            ...((result.failures as { replyId: string }[]) ?? []),
          ].map((m) => m.replyId),
        );
        const inResult = memberIds.has(replyId);
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
  // published-once: copies beyond the first on one channel need a fault to explain them.
  for (const [aggregateId, { copies }] of results) {
    for (const channel of new Set(copies.map((c) => c.channel))) {
      const on = copies.filter((c) => c.channel === channel);
      if (on.length < 2 || on.some((c) => c.taskId === undefined || ledger.excused.has(c.taskId))) continue;
      fail(
        'published-once',
        `published ${on.length} times on ${channel} (by ${on.map((c) => `#${c.taskId} ${c.task}`).join(', ')}) though no fault touched any of them`,
        aggregateId,
      );
    }
  }
  checkCancellations(ledger, definitions, results, fail);
  checkResponders(ledger, definitions, results, fail);
  for (const rewrite of ledger.rewrites) {
    fail(
      'recorded-once',
      `a put at ${rewrite.at} replaced the recorded ${rewrite.key.slice(0, 120)}`,
      rewrite.aggregateId,
    );
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
  return dedupe(
    options.pending ? violations : violations.filter((v) => !PENDING_INVARIANTS.has(v.invariant)),
  );
}

/**
 * The members received after the deadline in force when they were received. A reply's arrival
 * is the earliest of its copies' acceptance by SQS (`SentTimestamp`, the same on every
 * redelivery of a copy) and the first delivery of it to a reply invocation (by that invocation's
 * clock) while its
 * aggregate was open, or before its aggregate existed (held: in time). The deadline in force is
 * the one the header fixed at open (its parameters' `timeoutSeconds` from `openedAt`, request
 * `parameters` and `set-parameters` included) or its `closeBy`, whichever is first; with an
 * inactivity timeout, the last arrival in time (by its recording's clock, the later one) plus the
 * timeout, never past that.
 */
function lateMembers(
  members: readonly string[],
  receipts: readonly ReplyEvent[],
  recordings: readonly ReplyEvent[],
): { replyId: string; clock: number; inForce: number }[] {
  const header = receipts.find((e) => e.exists && e.openedAt !== undefined);
  if (header === undefined) return [];
  const openedAt = header.openedAt as number;
  const end = Math.min(
    header.timeoutSeconds === undefined ? Number.POSITIVE_INFINITY : openedAt + header.timeoutSeconds * 1000,
    header.closeBy ?? Number.POSITIVE_INFINITY,
  );
  const idle = header.inactivityTimeoutSeconds;
  const arrival = new Map<string, number>();
  for (const e of receipts) {
    if (e.exists && !e.open) continue;
    // Its arrival at fanin (wire-contract.md, "Late replies and the deadline"): when SQS accepted
    // the copy, or the invocation's clock if earlier.
    const at = e.exists ? Math.min(e.clock, e.sentAt ?? Number.POSITIVE_INFINITY) : Number.NEGATIVE_INFINITY;
    if (at < (arrival.get(e.replyId) ?? Number.POSITIVE_INFINITY)) arrival.set(e.replyId, at);
  }
  const recorded = new Map<string, number>();
  for (const e of recordings) recorded.set(e.replyId, Math.max(recorded.get(e.replyId) ?? 0, e.clock));
  const wanted = new Set(members);
  const late: { replyId: string; clock: number; inForce: number }[] = [];
  let last = openedAt;
  for (const [replyId, at] of [...arrival].sort((a, b) => a[1] - b[1])) {
    const inForce = Math.min(idle === undefined ? Number.POSITIVE_INFINITY : last + idle * 1000, end);
    if (at > inForce) {
      if (wanted.has(replyId)) late.push({ replyId, clock: at, inForce });
      continue;
    }
    last = Math.max(last, at, recorded.get(replyId) ?? 0);
  }
  return late;
}

/**
 * The recording at which an aggregate's all/count/first condition first held on the replies
 * recorded so far (each reply id once, its first recording), if it ever did while its header was
 * open with a deadline.
 */
function conditionHeldAt(definition: Definition, events: readonly ReplyEvent[]): ReplyEvent | undefined {
  const completion = definition.completion;
  const strategy = completion.strategy;
  if (strategy !== 'all' && strategy !== 'count' && strategy !== 'first') return undefined;
  const seen = new Set<string>();
  let successes = 0;
  for (const event of [...events].sort((a, b) => a.at - b.at)) {
    if (seen.has(event.replyId)) continue;
    seen.add(event.replyId);
    if (!event.failure) successes += 1;
    if (!event.open || event.deadline === undefined) continue;
    const expected = event.expected ?? Number.POSITIVE_INFINITY;
    const holds =
      strategy === 'all'
        ? seen.size >= expected
        : strategy === 'first'
          ? successes >= 1
          : successes >= Math.min(expected, event.count ?? (completion as { count: number }).count);
    if (holds) return event;
  }
  return undefined;
}

function tagOf(body: string): unknown {
  try {
    return (JSON.parse(body) as { tag?: unknown }).tag;
  } catch {
    return undefined;
  }
}

/** The count of a `count` completion, or of an `any` completion's `count` rule. */
function countRuleCount(completion: Definition['completion']): number | undefined {
  if (completion.strategy === 'count') return completion.count;
  if (completion.strategy !== 'any') return undefined;
  const rule = completion.rules.find((r) => r.rule === 'count');
  return rule?.rule === 'count' ? rule.count : undefined;
}

/** The `parameters.count` the requests sent for this aggregate asked for, when they agree on one. */
function requestedCount(ledger: Ledger, aggregateId: string): number | undefined {
  const counts = new Set<unknown>();
  for (const input of ledger.inputs) {
    if (input.kind !== 'request' || input.aggregateId !== aggregateId) continue;
    let body: { parameters?: { count?: unknown } } | undefined;
    try {
      body = JSON.parse(input.body) as typeof body;
    } catch {
      continue;
    }
    counts.add(body?.parameters?.count);
  }
  const [count] = [...counts];
  return counts.size === 1 && typeof count === 'number' ? count : undefined;
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

/** `cancel-after-result` and `cancel-unanswered` (see {@link Violation}). */
function checkCancellations(
  ledger: Ledger,
  definitions: ReadonlyMap<string, Definition>,
  results: ReadonlyMap<string, { copies: Publication[]; output: Output }>,
  fail: (invariant: string, detail: string, aggregateId?: string) => void,
): void {
  if (ledger.cancellations.length === 0) return;
  const firstResult = new Map<string, number>();
  for (const [aggregateId, { copies }] of results) {
    const first = Math.min(...copies.map((c) => ledger.publications.indexOf(c)));
    firstResult.set(aggregateId, first);
  }
  const key = (s: { aggregateId: string; replyId: string }) => `${s.aggregateId}\u0000${s.replyId}`;
  const asked = groupBy(ledger.asked, key);
  const answeredOpen = new Set(ledger.stored.filter((r) => r.exists && r.open).map(key));
  const notices = groupBy(ledger.cancellations, key);
  for (const [, copies] of notices) {
    const notice = copies[0] as (typeof copies)[number];
    const { aggregateId, replyId } = notice;
    const result = results.get(aggregateId);
    for (const copy of copies) {
      const first = firstResult.get(aggregateId);
      if (first === undefined || copy.afterPublications <= first)
        fail(
          'cancel-after-result',
          `notice for reply ${replyId} sent at ${copy.at} by #${copy.taskId} ${copy.task} before the terminal output`,
          aggregateId,
        );
    }
    const output = result?.output;
    const definition = definitions.get(String(output?.definition));
    if (output && definition?.cancelOutstanding !== true)
      fail(
        'cancel-unanswered',
        `notice for reply ${replyId} of ${definition?.name}, which does not cancel`,
        aggregateId,
      );
    const sent = asked.get(key(notice)) ?? [];
    const missing = Array.isArray(output?.missing)
      ? (output.missing as { replyId: string; asked?: boolean }[])
      : [];
    const claimedAsked = missing.some((m) => m.replyId === replyId && m.asked !== false);
    for (const copy of copies) {
      if (sent.length > 0 ? !sent.some((s) => s.queue === copy.queue) : !claimedAsked)
        fail(
          'cancel-unanswered',
          `notice for reply ${replyId} sent to ${copy.queue}, where no sub-request of it went (sent to ${sent.map((s) => s.queue).join(', ') || 'none'})`,
          aggregateId,
        );
    }
    if (answeredOpen.has(key(notice)))
      fail(
        'cancel-unanswered',
        `notice for reply ${replyId}, which was answered before the seal`,
        aggregateId,
      );
    const members = [
      ...(Array.isArray(output?.result) && definition?.aggregation.algorithm === 'collect'
        ? (output.result as { replyId: string }[])
        : []),
      ...(Array.isArray(output?.failures) ? (output.failures as { replyId: string }[]) : []),
    ];
    if (members.some((m) => m.replyId === replyId))
      fail('cancel-unanswered', `notice for reply ${replyId}, a member of the result`, aggregateId);
    if (copies.length > 1 && !copies.some((c) => ledger.excused.has(c.taskId)))
      fail(
        'cancel-unanswered',
        `${copies.length} notices for reply ${replyId} (by ${copies.map((c) => `#${c.taskId} ${c.task}`).join(', ')}) though no fault touched any of them`,
        aggregateId,
      );
  }
}
