import type { Definition } from '../shared/engine/definition.ts';
import { canonical, groupBy, type Ledger, type Publication, type ResponderSend } from './ledger.ts';

/**
 * The properties of looking after the responders (a definition's `responders`: recipient
 * deadlines, heartbeats, retries; docs/definitions.md), checked on a finished run's ledger beside
 * the others (sim/invariants.ts):
 *
 * - `retry-same`: a retry (a sub-request with `fanin-attempt` 2 or more) is of a definition that
 *   retries, and goes where its first attempt went, with the same body and reply queue: nothing
 *   but the definition and the stored request chooses it;
 * - `retry-bounded`: a recipient is sent no attempt beyond `retry.attempts + 1`, attempt `n + 1`
 *   never before attempt `n` (from 2 on), and a result that says a recipient was retried N times
 *   had attempts 2 to N + 1 each sent (a round is recorded only after it was sent);
 * - `retry-unanswered`: a retry goes only to a recipient with no reply stored in its open
 *   aggregate before the invocation that sent it began (that invocation read the replies after);
 * - `retry-before-seal`: a retry is sent only by an invocation that began before its aggregate's
 *   terminal output was first published (a round is taken only while the aggregate is open);
 * - `heartbeat-not-member`: no heartbeat is a member of a result (its body, which looks like a
 *   reply's, is never one the result holds unless a reply carried it too);
 * - `recipient-deadline`: no member of a result arrived after its recipient's own deadline as the
 *   result states it (`recipients[].deadline`, heartbeats included).
 */

type Output = Record<string, unknown> & { id: string; type: string };
type Fail = (invariant: string, detail: string, aggregateId?: string) => void;

interface Fate {
  readonly replyId: string;
  readonly fate: string;
  readonly deadline?: number;
  readonly retries?: number;
}

const keyOf = (s: { readonly aggregateId?: string; readonly replyId?: string }) =>
  `${s.aggregateId ?? ''}\u0000${s.replyId ?? ''}`;

/** The members and failures of a result, by reply id, with their bodies. */
function membersOf(output: Output, definition: Definition | undefined): { replyId: string; body: unknown }[] {
  const members =
    Array.isArray(output.result) && definition?.aggregation.algorithm === 'collect'
      ? (output.result as { replyId: string; body: unknown }[])
      : [];
  const failures = Array.isArray(output.failures)
    ? (output.failures as { replyId: string; body: unknown }[])
    : [];
  return [...members, ...failures];
}

/** Checks the responder invariants (see the module's comment). */
export function checkResponders(
  ledger: Ledger,
  definitions: ReadonlyMap<string, Definition>,
  results: ReadonlyMap<string, { readonly copies: readonly Publication[]; readonly output: Output }>,
  fail: Fail,
): void {
  const definitionOf = new Map<string, string>();
  for (const s of ledger.subRequests)
    if (!definitionOf.has(s.aggregateId)) definitionOf.set(s.aggregateId, s.definition);
  for (const [aggregateId, { output }] of results) definitionOf.set(aggregateId, String(output.definition));
  checkRetries(ledger, definitions, results, definitionOf, fail);
  checkHeartbeatsAndDeadlines(ledger, definitions, results, fail);
}

function checkRetries(
  ledger: Ledger,
  definitions: ReadonlyMap<string, Definition>,
  results: ReadonlyMap<string, { readonly copies: readonly Publication[]; readonly output: Output }>,
  definitionOf: ReadonlyMap<string, string>,
  fail: Fail,
): void {
  const byRecipient = groupBy(ledger.asked, keyOf);
  const storedOpen = groupBy(
    ledger.stored.filter((r) => r.exists && r.open),
    keyOf,
  );
  const firstResultAt = new Map<string, number>();
  for (const [aggregateId, { copies }] of results)
    firstResultAt.set(aggregateId, Math.min(...copies.map((c) => c.at)));
  for (const [key, sends] of byRecipient) {
    const { aggregateId, replyId } = sends[0] as ResponderSend;
    const retries = sends.filter((s) => s.attempt >= 2);
    if (retries.length === 0) continue;
    const definition = definitions.get(definitionOf.get(aggregateId) ?? '');
    if (definition === undefined) continue;
    const policy = definition.responders?.retry;
    const id = replyId.slice(0, 40);
    if (policy === undefined) {
      fail(
        'retry-same',
        `reply ${id} was sent attempt ${retries[0]?.attempt} though its definition does not retry`,
        aggregateId,
      );
      continue;
    }
    const firsts = sends.filter((s) => s.attempt === 1);
    for (const retry of retries) {
      const same = firsts.some(
        (f) => f.queue === retry.queue && f.body === retry.body && f.replyTo === retry.replyTo,
      );
      if (firsts.length > 0 && !same)
        fail(
          'retry-same',
          `attempt ${retry.attempt} of reply ${id} went to ${retry.queue} with body ${retry.body.slice(0, 80)}, not as its first attempt (${firsts.map((f) => `${f.queue} ${f.body.slice(0, 80)}`).join('; ')})`,
          aggregateId,
        );
      if (retry.attempt > policy.attempts + 1)
        fail(
          'retry-bounded',
          `reply ${id} was sent attempt ${retry.attempt}, beyond ${policy.attempts} retries`,
          aggregateId,
        );
      if (retry.attempt >= 3) {
        const before = sends.some((s) => s.attempt === retry.attempt - 1 && s.at <= retry.at);
        if (!before)
          fail(
            'retry-bounded',
            `reply ${id} was sent attempt ${retry.attempt} at ${retry.at} before any attempt ${retry.attempt - 1}`,
            aggregateId,
          );
      }
      const answered = (storedOpen.get(key) ?? []).find((r) => r.at < retry.taskStartedAt);
      if (answered)
        fail(
          'retry-unanswered',
          `attempt ${retry.attempt} of reply ${id} was sent by #${retry.taskId} ${retry.task} (begun at ${retry.taskStartedAt}), though a reply of it was stored at ${answered.at}`,
          aggregateId,
        );
      const published = firstResultAt.get(aggregateId);
      if (published !== undefined && retry.taskStartedAt > published)
        fail(
          'retry-before-seal',
          `attempt ${retry.attempt} of reply ${id} was sent by #${retry.taskId} ${retry.task}, begun at ${retry.taskStartedAt}, after the result was published at ${published}`,
          aggregateId,
        );
    }
  }
  // What a result says it retried was sent.
  for (const [aggregateId, { output }] of results) {
    for (const fate of fatesOf(output)) {
      const said = fate.retries ?? 0;
      if (said === 0) continue;
      const attempts = new Set(
        (byRecipient.get(keyOf({ aggregateId, replyId: fate.replyId })) ?? []).map((s) => s.attempt),
      );
      const unsent = Array.from({ length: said }, (_, i) => i + 2).filter((a) => !attempts.has(a));
      if (unsent.length > 0)
        fail(
          'retry-bounded',
          `the result says reply ${fate.replyId} was retried ${said} times, yet attempt ${unsent.join(', ')} was never sent`,
          aggregateId,
        );
    }
  }
}

function fatesOf(output: Output): Fate[] {
  return Array.isArray(output.recipients) ? (output.recipients as Fate[]) : [];
}

function checkHeartbeatsAndDeadlines(
  ledger: Ledger,
  definitions: ReadonlyMap<string, Definition>,
  results: ReadonlyMap<string, { readonly copies: readonly Publication[]; readonly output: Output }>,
  fail: Fail,
): void {
  const heartbeats = groupBy(
    ledger.inputs.filter((i) => i.kind === 'heartbeat'),
    keyOf,
  );
  const replies = groupBy(
    ledger.inputs.filter((i) => i.kind === 'reply'),
    keyOf,
  );
  const receipts = groupBy(
    ledger.receipts.filter((e) => e.exists && e.open),
    keyOf,
  );
  for (const [aggregateId, { output }] of results) {
    const definition = definitions.get(String(output.definition));
    const fates = new Map(fatesOf(output).map((f) => [f.replyId, f]));
    for (const member of membersOf(output, definition)) {
      const key = keyOf({ aggregateId, replyId: member.replyId });
      const body = canonical(member.body);
      const beats = (heartbeats.get(key) ?? []).map((h) => canonical(h.body));
      const sent = (replies.get(key) ?? []).map((r) => canonical(r.body));
      if (beats.includes(body) && !sent.includes(body))
        fail(
          'heartbeat-not-member',
          `reply ${member.replyId} in the result is a heartbeat's body`,
          aggregateId,
        );
      const deadline = fates.get(member.replyId)?.deadline;
      if (deadline === undefined) continue;
      // Its arrival, as for the aggregate's deadline: when SQS accepted a copy, or the clock of
      // the invocation that received it if earlier.
      const arrived = Math.min(
        ...(receipts.get(key) ?? []).map((e) => Math.min(e.clock, e.sentAt ?? Number.POSITIVE_INFINITY)),
      );
      if (arrived > deadline)
        fail(
          'recipient-deadline',
          `reply ${member.replyId} is a member, yet it arrived at ${arrived}, ${arrived - deadline} ms after its own deadline (${deadline})`,
          aggregateId,
        );
    }
  }
}
