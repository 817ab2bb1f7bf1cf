import { createHash } from 'node:crypto';
import { deadlineOf, nextDueAt } from '../engine/completion/deadline.ts';
import { CompletedBy } from '../engine/completion/decision.ts';
import { needsExpected } from '../engine/completion/plan.ts';
import { AggregateStatus, Outcome } from '../engine/constants.ts';
import { WireAttribute } from '../engine/correlation.ts';
import {
  type Definition,
  type EffectiveParameters,
  effectiveParameters,
  type RuntimeParameters,
} from '../engine/definition.ts';
import { openingDeadline } from '../engine/inactivity.ts';
import { parseJsonBody } from '../engine/json-body.ts';
import { keepsRequest } from '../engine/keeps-request.ts';
import {
  identifierProblem,
  MAX_DEFINITION_NAME_LENGTH,
  MAX_FAN_OUT,
  MAX_LABEL_LENGTH,
  MAX_REQUEST_AGGREGATE_ID_LENGTH,
  MAX_REQUEST_ID_LENGTH,
  quoted,
} from '../engine/limits.ts';
import { readPath } from '../engine/path.ts';
import { recipientListTargets } from '../engine/recipients.ts';
import { expectedOutsideBounds, requestOverrides } from '../engine/request-parameters.ts';
import { settlementAt } from '../engine/responders.ts';
import { BadMessageError, isUnfixable } from '../errors.ts';
import { MetricName } from '../observability/metric-names.ts';
import type { AggregateHeader, RawMessage, StoredPayload, SubRequest } from '../ports.ts';
import { closeByOf, replyExpiry } from './aggregate-life.ts';
import { completeAggregate } from './complete.ts';
import type { FaninContext } from './context.ts';
import { routeError, routeIfUnfixable } from './error-output.ts';
import { evaluate } from './evaluate.ts';
import { consolidateHeld } from './held.ts';
import { armFirstSnapshot } from './snapshots.ts';
import { resolvePayload, storable } from './stored-payloads.ts';
import { subRequestMessage } from './sub-requests.ts';

/** Most sub-requests one request may fan out to (stated in engine/limits.ts). */
export { MAX_FAN_OUT };

/** A request-chosen aggregate id. No ':': `<definition>:<key>` is the self-starting namespace. */
const AGGREGATE_ID = new RegExp(`^[A-Za-z0-9][A-Za-z0-9_\\-./]{0,${MAX_REQUEST_AGGREGATE_ID_LENGTH - 1}}$`);
/**
 * Separates a request id from its plan's digest in the header's `requestId`. Refused in a
 * request id (no control characters), so a header written before digests were kept (a bare
 * request id) is told apart from one written with a digest.
 */
const DIGEST_SEPARATOR = '\u0000';

/** A request, validated against its definition. */
interface Plan {
  readonly definition: Definition;
  readonly requestId: string;
  readonly aggregateId: string;
  readonly body: Record<string, unknown>;
  /** Sub-requests to send (empty for fan-out `none`). */
  readonly subRequests: readonly { target: string; body: unknown; label?: string }[];
  /** The recipients the request named (body.recipients): checked to be queues that exist before the aggregate opens. */
  readonly namedRecipients: readonly string[];
  readonly expected?: number;
  /** Parameters the request set for its own aggregate, checked against the definition's bounds. */
  readonly parameters: RuntimeParameters;
  /**
   * The request's identity as its aggregate's header keeps it: the request id and a digest of
   * everything the aggregate is built from (see {@link identityOf}). A retry must match it.
   */
  readonly identity: string;
}

/**
 * Handles one request from the ingress queue: the control message that opens an aggregate (an
 * initialized aggregator, whose request says what to expect).
 *
 * Primary course:
 * 1. validate the request against its definition; a bad one goes to the error output, and so
 *    does one naming a recipient whose queue does not exist or may not be used (checked first);
 * 2. write the aggregate (expected count, deadline, parameters) *before* any sub-request is sent,
 *    so a reply cannot beat its aggregate in the normal path;
 * 3. consolidate replies that arrived before it (held unknown replies);
 * 4. send the sub-requests, each naming the aggregate, its reply id and where to reply; mark sent;
 * 5. arm the deadline timer (before the sends: a send that fails cannot leave the aggregate
 *    without it) and evaluate completion (an empty fan-out completes at once).
 *
 * A send whose queue turns out not to exist, or not to be usable, when the sub-requests go out
 * (deleted after the check, or a definition's own target) cannot be fixed by a retry either: the
 * aggregate ends `failed` with the reason at once and the request goes to the error output.
 *
 * A retried request finds its aggregate (same request id) and resumes where the first attempt
 * stopped; sub-requests keep their reply ids, so a responder's duplicate reply is recognised.
 * An aggregate id already taken by a different request is an error.
 */
export async function handleRequest(
  ctx: FaninContext,
  raw: RawMessage,
  options: FanOutOptions = {},
): Promise<void> {
  let plan: Plan;
  try {
    plan = planRequest(ctx, await resolvePayload(ctx, raw));
  } catch (error) {
    await routeIfUnfixable(ctx, 'ingress', raw, error);
    return;
  }
  try {
    // Before the aggregate opens: a request naming a queue that is not there opens nothing.
    if (plan.namedRecipients.length > 0) await ctx.sender.check?.(plan.namedRecipients);
  } catch (error) {
    if (!isUnfixable(error)) throw error;
    await refuseUnreachable(ctx, raw, plan, error.message);
    return;
  }
  const { definition, aggregateId } = plan;
  const now = ctx.clock();
  // The request's own parameters (within the definition's bounds) over the runtime ones, fixed in
  // the header at open: every later decision reads the same values.
  const params = {
    ...effectiveParameters(definition, await ctx.store.getParameters(definition.name)),
    ...plan.parameters,
    ...recipientTimeoutsOf(definition, plan.subRequests),
  };
  // With an inactivity timeout the first deadline may come before the absolute one (inactivity.ts).
  const deadline = openingDeadline(params, now);
  // Kept when its sub-requests may be sent again: a retry names the same reply queue (retry.ts).
  const replyTo = params.retry !== undefined ? await ctx.replies.replyTo(aggregateId) : undefined;
  const header: AggregateHeader = {
    aggregateId,
    definition: definition.name,
    status: AggregateStatus.OPEN,
    ...(plan.expected !== undefined ? { expected: plan.expected } : {}),
    received: 0,
    lateCount: 0,
    openedAt: now,
    params,
    requestId: plan.identity,
    shards: definition.writeShards,
    closeBy: closeByOf(definition, now, deadlineOf(params, now)),
    ...(deadline !== undefined ? { deadline } : {}),
    ...recipientsDueAtOpen(params, plan.expected, now),
    ...(replyTo !== undefined ? { replyTo } : {}),
    // None sent yet: raised before each chunk is sent, so a result can name those never asked.
    ...(plan.subRequests.length > 0 ? { askedUpTo: 0 } : {}),
  };
  const labels = plan.subRequests.map((s) => s.label ?? null);
  let request: StoredPayload | undefined;
  try {
    request = keepsRequest(definition)
      ? await storable(
          ctx,
          `request\u0000${aggregateId}`,
          JSON.stringify({ body: plan.body, labels }),
          'request',
        )
      : undefined;
  } catch (error) {
    await routeIfUnfixable(ctx, 'ingress', raw, error);
    return;
  }
  let opened: Awaited<ReturnType<FaninContext['store']['openAggregate']>>;
  try {
    opened = await ctx.store.openAggregate(
      header,
      request && { ...request, expiresAt: replyExpiry(ctx, definition, header) },
    );
  } catch (error) {
    // Another request claimed the id first (its request item is stored): refused, nothing opened.
    await routeIfUnfixable(ctx, 'ingress', raw, error);
    return;
  }
  const current = opened.header;
  if (opened.created) ctx.metrics?.count(MetricName.AGGREGATES_OPENED, definition.name);
  const refusal = opened.created ? undefined : resumeRefusal(plan, current);
  if (refusal) {
    await routeError(ctx, 'ingress', raw, refusal);
    return;
  }
  // A tombstone: this request was handled before (a retry, a redelivery, a DLQ redrive).
  if (current.status !== AggregateStatus.OPEN) return;
  await consolidateHeld(ctx, aggregateId);
  // Armed before any send: a send that fails (or a request out of time) leaves the aggregate its
  // timer, so its deadline is kept to the second, not found overdue by the next sweep.
  const due = nextDueAt(current);
  if (due !== undefined) await ctx.timers.arm({ kind: 'deadline', aggregateId, dueAt: due }, now);
  let done: boolean;
  try {
    done = await dispatch(ctx, plan, current, options);
  } catch (error) {
    if (!isUnfixable(error)) throw error;
    await refuseUnreachable(ctx, raw, plan, error.message);
    return;
  }
  if (!done) {
    // Out of time: the rest is sent by the same request, queued again (it resumes from the
    // recorded progress, and the sub-requests already sent keep their reply ids).
    await ctx.requeue(raw);
    return;
  }
  await armFirstSnapshot(ctx, definition, current, now);
  await evaluate(ctx, definition, await ctx.store.readAggregate(aggregateId));
}

/**
 * A recipient list's own recipient deadlines (`responders.timeouts`, by the queue the list names),
 * by reply id, fixed in the header's parameters at open; `null` where a recipient has none of its
 * own (it takes `responders.timeoutSeconds`).
 */
function recipientTimeoutsOf(
  definition: Definition,
  subRequests: readonly { readonly target: string }[],
): { recipientTimeouts?: (number | null)[] } {
  const own = definition.responders?.timeouts;
  if (own === undefined || definition.fanOut?.type !== 'recipient-list') return {};
  const timeouts = subRequests.map((s) => own[s.target] ?? null);
  return timeouts.some((t) => t !== null) ? { recipientTimeouts: timeouts } : {};
}

/** The first recipient deadline of an aggregate opening at `now` (engine/responders.ts), if its recipients have any. */
function recipientsDueAtOpen(
  params: EffectiveParameters,
  expected: number | undefined,
  now: number,
): { recipientsDue?: number } {
  if (expected === undefined || expected === 0) return {};
  const first = settlementAt({ openedAt: now, expected, params }, new Set(), now).nextDue;
  return first === undefined ? {} : { recipientsDue: first };
}

/** What the invocation running a fan-out tells it. */
export interface FanOutOptions {
  /** Milliseconds the invocation has left (Lambda's `getRemainingTimeInMillis`). @default unbounded */
  readonly remainingTimeMs?: () => number;
}

/** Sub-requests sent between two records of progress (only fan-outs larger than this record any). */
export const DISPATCH_CHUNK = 500;
/** Time an invocation keeps in hand to record progress and queue the rest. */
const DISPATCH_MARGIN_MS = 5_000;

/**
 * Sends the sub-requests from `from` on, in chunks; after each chunk of a large fan-out it records
 * how far it got, so a retry — or the continuation queued when time runs out — sends only the rest.
 * A small fan-out (one chunk) records nothing: a retry resends it, and the responders' duplicate
 * replies carry the same reply ids.
 *
 * @returns false when time ran out before every sub-request was sent.
 */
async function dispatch(
  ctx: FaninContext,
  plan: Plan,
  header: AggregateHeader,
  options: FanOutOptions,
): Promise<boolean> {
  const from = header.dispatchedUpTo ?? 0;
  const total = plan.subRequests.length;
  if (from >= total) return true;
  const all = await subRequestsOf(ctx, plan, header.replyTo);
  let asked = header.askedUpTo;
  // Each chunk's queues are resolved before it is marked asked and sent (cached: no extra call
  // for a queue already resolved): a queue that is not there stops the fan-out with the chunk
  // unsent and unmarked, so the failed result says those were never asked.
  const check = ctx.sender.check?.bind(ctx.sender);
  for (let start = from; start < total; start += DISPATCH_CHUNK) {
    if (start > from && (options.remainingTimeMs?.() ?? Number.POSITIVE_INFINITY) < DISPATCH_MARGIN_MS) {
      return false;
    }
    const end = Math.min(total, start + DISPATCH_CHUNK);
    await check?.(all.slice(start, end).map((s) => s.target));
    // Recorded before the send: a sub-request at or past `askedUpTo` was certainly never sent.
    if (asked !== undefined && asked < end) {
      await ctx.store.markAsked(plan.aggregateId, end);
      asked = end;
    }
    await ctx.sender.send(all.slice(start, end));
    if (end < total) await ctx.store.markDispatched(plan.aggregateId, end);
  }
  return true;
}

function planRequest(ctx: FaninContext, raw: RawMessage): Plan {
  const parsed = parseJsonBody(raw);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BadMessageError('request body must be a JSON object');
  }
  const body = parsed as Record<string, unknown>;
  const name = raw.attributes[WireAttribute.DEFINITION] ?? body.definition;
  if (typeof name !== 'string') {
    throw new BadMessageError(
      `request names no definition (attribute ${WireAttribute.DEFINITION} or body.definition)`,
    );
  }
  const definition = ctx.definitions.get(name);
  if (!definition) {
    throw new BadMessageError(
      name.length > MAX_DEFINITION_NAME_LENGTH
        ? `definition name is ${name.length} characters, more than the ${MAX_DEFINITION_NAME_LENGTH} a definition's name has`
        : `unknown definition "${name}"`,
    );
  }
  if (definition.mode !== 'initialized') {
    throw new BadMessageError(
      `definition "${name}" is self-starting: its aggregates are opened by their first reply, not by a request`,
    );
  }
  // Without a request id, the message's first identity: a requeued or moved copy keeps it. A
  // request id given is a string of 1-256 characters: an empty one or a number is refused, not
  // taken for none (another identity) or for its text.
  const givenRequestId = raw.attributes[WireAttribute.REQUEST_ID] ?? body.requestId;
  if (givenRequestId !== undefined && typeof givenRequestId !== 'string') {
    throw new BadMessageError(
      `requestId must be a string of 1-${MAX_REQUEST_ID_LENGTH} characters (received ${describeJson(givenRequestId)})`,
    );
  }
  const requestId = givenRequestId ?? (raw.attributes[WireAttribute.ORIGIN_MESSAGE_ID] || raw.messageId);
  // Kept in the header and on every sub-request: a 400 KB id would make the header unwritable
  // (a retryable failure, so the request would cycle into the dead-letter queue).
  const requestIdProblem = identifierProblem(requestId, MAX_REQUEST_ID_LENGTH);
  if (requestIdProblem) throw new BadMessageError(`requestId ${requestIdProblem}`);
  const explicitId = stringOf(raw.attributes[WireAttribute.AGGREGATE_ID] ?? body.aggregateId);
  if (explicitId !== undefined && !AGGREGATE_ID.test(explicitId)) {
    throw new BadMessageError(
      `aggregateId must be 1-${MAX_REQUEST_AGGREGATE_ID_LENGTH} of A-Z a-z 0-9 _ - . / starting alphanumeric (received ${quoted(explicitId)}${explicitId.length > 80 ? `, ${explicitId.length} characters` : ''})`,
    );
  }
  const aggregateId =
    explicitId ?? `${name}-${createHash('sha256').update(requestId).digest('hex').slice(0, 32)}`;
  const fanOut = definition.fanOut ?? { type: 'none' as const };
  let subRequests: { target: string; body: unknown; label?: string }[] = [];
  let namedRecipients: string[] = [];
  let expected: number | undefined;
  switch (fanOut.type) {
    case 'splitter': {
      const items = readPath(body, fanOut.itemsPath);
      if (!Array.isArray(items))
        throw new BadMessageError(`${fanOut.itemsPath} is not an array in the request`);
      if (items.length > MAX_FAN_OUT)
        throw new BadMessageError(`fan-out of ${items.length} exceeds the limit of ${MAX_FAN_OUT}`);
      subRequests = items.map((item, index) => {
        const label = fanOut.labelPath ? stringOf(readPath(item, fanOut.labelPath)) : undefined;
        // Every missing reply of a result carries its label: an unbounded one makes the result unsendable.
        if (label !== undefined && label.length > MAX_LABEL_LENGTH) {
          throw new BadMessageError(
            `${fanOut.itemsPath}[${index}]'s label (${fanOut.labelPath}) is ${label.length} characters, more than the ${MAX_LABEL_LENGTH} allowed`,
          );
        }
        return { target: fanOut.target, body: item, ...(label !== undefined ? { label } : {}) };
      });
      expected = items.length;
      break;
    }
    case 'recipient-list': {
      const listed = recipientListTargets(fanOut, body, ctx.recipients, MAX_FAN_OUT);
      const payload = body.payload ?? body;
      const checked = listed.targets;
      if (listed.named) namedRecipients = checked;
      subRequests = checked.map((target) => ({ target, body: payload, label: target }));
      expected = checked.length;
      break;
    }
    case 'none': {
      const count = body.expected;
      if (needsExpected(definition.completion) && !(Number.isInteger(count) && (count as number) >= 0)) {
        throw new BadMessageError(
          `body.expected must be a non-negative integer for strategy "${definition.completion.strategy}" without fan-out (received ${JSON.stringify(count)})`,
        );
      }
      // Without a count the aggregate does not know how many replies to expect (e.g. a broadcast).
      expected = Number.isInteger(count) && (count as number) >= 0 ? (count as number) : undefined;
      break;
    }
  }
  if (expected !== undefined && expected > MAX_FAN_OUT)
    throw new BadMessageError(`fan-out of ${expected} exceeds the limit of ${MAX_FAN_OUT}`);
  const overrides = requestOverrides(definition, body.parameters);
  if ('refusal' in overrides) throw new BadMessageError(overrides.refusal);
  if (fanOut.type === 'none') {
    const refusal = expectedOutsideBounds(definition, expected);
    if (refusal) throw new BadMessageError(refusal);
  }
  const plan = {
    definition,
    parameters: overrides.parameters,
    requestId,
    aggregateId,
    body,
    subRequests,
    namedRecipients,
    ...(expected !== undefined ? { expected } : {}),
  };
  return { ...plan, identity: identityOf(plan, keepsRequest(definition)) };
}

/**
 * A request one of whose queues can never be sent to (it does not exist, or fanin may not use it):
 * no retry can fix it. The aggregate this request opened, if any, ends `failed` with the reason at
 * once (its result on the error output names the sub-requests never sent `asked: false`), and the
 * request goes to the error output with the same reason; the ingress message is then done.
 */
async function refuseUnreachable(
  ctx: FaninContext,
  raw: RawMessage,
  plan: Plan,
  reason: string,
): Promise<void> {
  const header = await ctx.store.getHeader(plan.aggregateId);
  if (header && header.status !== AggregateStatus.CLOSED && !resumeRefusal(plan, header)) {
    await completeAggregate(ctx, plan.aggregateId, {
      outcome: Outcome.FAILED,
      completedBy: CompletedBy.FAILURES,
      reason,
    });
  }
  await routeError(ctx, 'ingress', raw, reason);
}

/**
 * Why a request may not resume the aggregate it found, if it may not: the aggregate was opened
 * by another request, or by this request id with another plan (another definition, expected
 * count, parameters, sub-requests or kept body). A "retry" that differs is not a retry: acting
 * on it would decide the aggregate by the other definition, or send its sub-requests under the
 * aggregate's reply ids. A header written before digests were kept holds the bare request id.
 */
function resumeRefusal(plan: Plan, current: AggregateHeader): string | undefined {
  const found = digestsOf(current.requestId ?? '');
  const given = digestsOf(plan.identity);
  // The whole digest decides (a header from before the parts were kept holds it alone).
  if (current.requestId === plan.requestId) return undefined;
  if (openingRequestId(current) === plan.requestId && found.digest === given.digest) return undefined;
  const id = quoted(plan.aggregateId);
  if (openingRequestId(current) !== plan.requestId)
    return `aggregate id ${id} is already in use by another request`;
  const differences = [
    current.definition !== plan.definition.name
      ? `definition ${quoted(plan.definition.name)}, not ${quoted(current.definition)}`
      : undefined,
    current.expected !== plan.expected
      ? `expected ${plan.expected ?? 'none'}, not ${current.expected ?? 'none'}`
      : undefined,
    ...Object.entries(plan.parameters).map(([name, value]) =>
      current.params[name as keyof AggregateHeader['params']] !== value
        ? `parameters.${name} ${String(value)}, not ${String(current.params[name as keyof AggregateHeader['params']] ?? 'unset')}`
        : undefined,
    ),
    ...partDifferences(plan, found.parts, given.parts, current.expected !== plan.expected),
  ].filter((d) => d !== undefined);
  return `request ${quoted(plan.requestId)} was retried with another plan than the one that opened aggregate ${id} (${
    differences.length > 0 ? differences.join('; ') : 'its parameters, sub-requests or body differ'
  }): a retry must repeat the request; the aggregate is left as it was`;
}

/**
 * The request id of the request that opened an aggregate, without the digest of its plan the
 * header keeps beside it (undefined for a self-starting aggregate).
 *
 * @example
 * openingRequestId(await ctx.store.getHeader('quote-0001')); // 'quote-2026-11-29-0001'
 */
export function openingRequestId(header: Pick<AggregateHeader, 'requestId'> | undefined): string | undefined {
  return header?.requestId?.split(DIGEST_SEPARATOR)[0];
}

/**
 * The identity a request's aggregate keeps: its request id, and a digest of what the aggregate
 * is built from — the definition, the expected count, the request's own parameters, every
 * sub-request (target, label, body) and, when the definition keeps the request (a custom
 * aggregation, labels, a predicate reading it), the body. Object keys are sorted, so a retry
 * whose JSON orders its keys differently is the same request. Each distinct body is encoded
 * once (a recipient list sends one payload to every recipient).
 */
function identityOf(plan: Omit<Plan, 'identity'>, keepsBody: boolean): string {
  const hash = createHash('sha256').update(
    canonicalJson({
      definition: plan.definition.name,
      aggregateId: plan.aggregateId,
      expected: plan.expected ?? null,
      parameters: plan.parameters,
      body: keepsBody ? plan.body : null,
    }),
  );
  // Beside the digest, one per part, so a retry that differs is told what differs.
  const targets = createHash('sha256');
  const bodies = createHash('sha256');
  const encoded = new Map<unknown, string>();
  for (const sub of plan.subRequests) {
    let body = encoded.get(sub.body);
    if (body === undefined) {
      body = createHash('sha256').update(canonicalJson(sub.body)).digest('hex');
      if (sub.body !== null && typeof sub.body === 'object') encoded.set(sub.body, body);
    }
    hash.update(`\n${JSON.stringify([sub.target, sub.label ?? null, body])}`);
    targets.update(`\n${JSON.stringify([sub.target, sub.label ?? null])}`);
    bodies.update(`\n${body}`);
  }
  const parts: PlanParts = {
    count: String(plan.subRequests.length),
    targets: targets.digest('hex').slice(0, 16),
    bodies: bodies.digest('hex').slice(0, 16),
    body: keepsBody ? createHash('sha256').update(canonicalJson(plan.body)).digest('hex').slice(0, 16) : '-',
  };
  return `${plan.requestId}${DIGEST_SEPARATOR}${hash.digest('hex')}${DIGEST_SEPARATOR}${PLAN_PARTS.map((k) => parts[k]).join('.')}`;
}

/** The parts of a plan the header's `requestId` keeps a digest of each, after the whole one's. */
const PLAN_PARTS = ['count', 'targets', 'bodies', 'body'] as const;
type PlanParts = Record<(typeof PLAN_PARTS)[number], string>;

/** The digest and the parts' digests an identity holds (none of them in a bare request id). */
function digestsOf(identity: string): { digest?: string; parts?: PlanParts } {
  const [, digest, parts] = identity.split(DIGEST_SEPARATOR);
  const values = parts?.split('.');
  return {
    ...(digest !== undefined ? { digest } : {}),
    ...(values?.length === PLAN_PARTS.length
      ? { parts: Object.fromEntries(PLAN_PARTS.map((k, i) => [k, values[i] ?? ''])) as PlanParts }
      : {}),
  };
}

/** What differs between the plan parts of a retry and of the request that opened the aggregate. */
function partDifferences(
  plan: Plan,
  current: PlanParts | undefined,
  given: PlanParts | undefined,
  expectedDiffers: boolean,
): string[] {
  if (!current || !given) return [];
  const recipients = plan.definition.fanOut?.type === 'recipient-list';
  const differences: string[] = [];
  if (current.count !== given.count) {
    // A fan-out expects as many replies as it sends: its count is said once, as `expected`.
    if (!expectedDiffers)
      differences.push(`${given.count} ${recipients ? 'recipients' : 'sub-requests'}, not ${current.count}`);
  } else {
    if (current.targets !== given.targets)
      differences.push(recipients ? 'other recipients' : 'other sub-request targets or labels');
    if (current.bodies !== given.bodies)
      differences.push(recipients ? 'another payload' : 'other sub-request bodies (items)');
  }
  // The kept body holds the sub-requests' source: said only when nothing else tells it apart.
  if (differences.length === 0 && !expectedDiffers && current.body !== given.body)
    differences.push('another request body');
  return differences;
}

/** JSON with every object's keys in order: equal values give equal text. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/** Sub-requests of a plan; all name the reply partition the aggregate has affinity with. */
async function subRequestsOf(ctx: FaninContext, plan: Plan, kept?: string): Promise<SubRequest[]> {
  const replyTo = kept ?? (await ctx.replies.replyTo(plan.aggregateId));
  // One text per distinct body: a recipient list's one payload is not encoded once per recipient.
  const encoded = new Map<unknown, string>();
  const text = (body: unknown): string => {
    const known = encoded.get(body);
    if (known !== undefined) return known;
    const json = JSON.stringify(body);
    if (body !== null && typeof body === 'object') encoded.set(body, json);
    return json;
  };
  const envelope = {
    aggregateId: plan.aggregateId,
    definition: plan.definition.name,
    replyTo,
    requestId: plan.requestId,
  };
  return plan.subRequests.map((sub, index) => subRequestMessage(envelope, index, sub.target, text(sub.body)));
}

function stringOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** What a JSON value is, for a reason: `null`, or its kind and its first 80 characters. */
function describeJson(value: unknown): string {
  if (value === null) return 'null';
  const kind = Array.isArray(value)
    ? 'an array'
    : typeof value === 'object'
      ? 'an object'
      : `a ${typeof value}`;
  return `${kind}: ${(JSON.stringify(value) ?? String(value)).slice(0, 80)}`;
}
