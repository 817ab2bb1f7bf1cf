import { createHash } from 'node:crypto';
import { deadlineOf } from '../engine/completion.ts';
import { AggregateStatus } from '../engine/constants.ts';
import { WireAttribute } from '../engine/correlation.ts';
import { type Definition, effectiveParameters } from '../engine/definition.ts';
import { readPath } from '../engine/path.ts';
import type { AggregateHeader, RawMessage, StoredPayload, SubRequest } from '../ports.ts';
import {
  BadMessageError,
  type FaninContext,
  parseJsonBody,
  resolvePayload,
  routeError,
  storable,
} from './context.ts';
import { consolidateHeld, evaluate } from './replies.ts';

/** Most sub-requests one request may fan out to. */
export const MAX_FAN_OUT = 10_000;
const AGGREGATE_ID = /^[A-Za-z0-9][A-Za-z0-9:_\-./]{0,199}$/;

/** A request, validated against its definition. */
interface Plan {
  readonly definition: Definition;
  readonly requestId: string;
  readonly aggregateId: string;
  readonly body: Record<string, unknown>;
  /** Sub-requests to send (empty for fan-out `none`). */
  readonly subRequests: readonly { target: string; body: unknown; label?: string }[];
  readonly expected?: number;
}

/**
 * Handles one request from the ingress queue (seed 000's AggregateControl + seed 002's
 * initialized aggregator).
 *
 * Primary course:
 * 1. validate the request against its definition; a bad one goes to the error output;
 * 2. write the aggregate (expected count, deadline, parameters) *before* any sub-request is sent,
 *    so a reply cannot beat its aggregate in the normal path;
 * 3. consolidate replies that arrived before it (held unknown replies);
 * 4. send the sub-requests, each naming the aggregate, its reply id and where to reply; mark sent;
 * 5. arm the deadline timer and evaluate completion (an empty fan-out completes at once).
 *
 * A retried request finds its aggregate (same request id) and resumes where the first attempt
 * stopped; sub-requests keep their reply ids, so a responder's duplicate reply is recognised.
 * An aggregate id already taken by a different request is an error.
 */
export async function handleRequest(ctx: FaninContext, raw: RawMessage): Promise<void> {
  let plan: Plan;
  try {
    plan = planRequest(ctx, await resolvePayload(ctx, raw));
  } catch (error) {
    if (!(error instanceof BadMessageError)) throw error;
    await routeError(ctx, 'ingress', raw, error.message);
    return;
  }
  const { definition, aggregateId } = plan;
  const now = ctx.clock();
  const params = effectiveParameters(definition, await ctx.store.getParameters(definition.name));
  const deadline = deadlineOf(params, now);
  const header: AggregateHeader = {
    aggregateId,
    definition: definition.name,
    status: AggregateStatus.OPEN,
    ...(plan.expected !== undefined ? { expected: plan.expected } : {}),
    received: 0,
    lateCount: 0,
    openedAt: now,
    params,
    requestId: plan.requestId,
    dispatched: false,
    ...(deadline !== undefined ? { deadline } : {}),
  };
  const labels = plan.subRequests.map((s) => s.label ?? null);
  let request: StoredPayload;
  try {
    request = await storable(
      ctx,
      `request\u0000${aggregateId}`,
      JSON.stringify({ body: plan.body, labels }),
      'request',
    );
  } catch (error) {
    if (!(error instanceof BadMessageError)) throw error;
    await routeError(ctx, 'ingress', raw, error.message);
    return;
  }
  const opened = await ctx.store.openAggregate(header, request);
  const current = opened.header;
  if (!opened.created && current.requestId !== plan.requestId) {
    await routeError(
      ctx,
      'ingress',
      raw,
      `aggregate id "${aggregateId}" is already in use by another request`,
    );
    return;
  }
  if (current.status !== AggregateStatus.OPEN) return;
  await consolidateHeld(ctx, aggregateId);
  if (!current.dispatched) {
    await ctx.sender.send(await subRequestsOf(ctx, plan));
    await ctx.store.markDispatched(aggregateId);
  }
  if (current.deadline !== undefined) {
    await ctx.timers.arm({ kind: 'deadline', aggregateId, dueAt: current.deadline }, now);
  }
  const latest = await ctx.store.getHeader(aggregateId);
  if (latest) await evaluate(ctx, definition, latest, []);
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
  if (!definition) throw new BadMessageError(`unknown definition "${name}"`);
  if (definition.mode !== 'initialized') {
    throw new BadMessageError(
      `definition "${name}" is self-starting: its aggregates are opened by their first reply, not by a request`,
    );
  }
  const requestId = stringOf(raw.attributes[WireAttribute.REQUEST_ID] ?? body.requestId) ?? raw.messageId;
  const explicitId = stringOf(raw.attributes[WireAttribute.AGGREGATE_ID] ?? body.aggregateId);
  if (explicitId !== undefined && !AGGREGATE_ID.test(explicitId)) {
    throw new BadMessageError(
      `aggregateId must be 1-200 of A-Z a-z 0-9 : _ - . / starting alphanumeric (received "${explicitId}")`,
    );
  }
  const aggregateId =
    explicitId ?? `${name}-${createHash('sha256').update(requestId).digest('hex').slice(0, 32)}`;
  const fanOut = definition.fanOut ?? { type: 'none' as const };
  let subRequests: { target: string; body: unknown; label?: string }[] = [];
  let expected: number | undefined;
  switch (fanOut.type) {
    case 'splitter': {
      const items = readPath(body, fanOut.itemsPath);
      if (!Array.isArray(items))
        throw new BadMessageError(`${fanOut.itemsPath} is not an array in the request`);
      subRequests = items.map((item) => {
        const label = fanOut.labelPath ? stringOf(readPath(item, fanOut.labelPath)) : undefined;
        return { target: fanOut.target, body: item, ...(label !== undefined ? { label } : {}) };
      });
      expected = items.length;
      break;
    }
    case 'recipient-list': {
      const recipients = fanOut.recipients ?? body.recipients;
      if (
        !Array.isArray(recipients) ||
        recipients.length === 0 ||
        !recipients.every((r) => typeof r === 'string' && r !== '')
      ) {
        throw new BadMessageError(
          'a recipient list needs recipients: in the definition or as a non-empty array of queue names in body.recipients',
        );
      }
      const payload = body.payload ?? body;
      subRequests = (recipients as string[]).map((target) => ({ target, body: payload, label: target }));
      expected = recipients.length;
      break;
    }
    case 'none': {
      const count = body.expected;
      if (definition.completion.strategy === 'all' && !(Number.isInteger(count) && (count as number) >= 0)) {
        throw new BadMessageError(
          `body.expected must be a non-negative integer for strategy "all" without fan-out (received ${JSON.stringify(count)})`,
        );
      }
      // Without a count the aggregate does not know how many replies to expect (e.g. a broadcast).
      expected = Number.isInteger(count) && (count as number) >= 0 ? (count as number) : undefined;
      break;
    }
  }
  if (expected !== undefined && expected > MAX_FAN_OUT)
    throw new BadMessageError(`fan-out of ${expected} exceeds the limit of ${MAX_FAN_OUT}`);
  return {
    definition,
    requestId,
    aggregateId,
    body,
    subRequests,
    ...(expected !== undefined ? { expected } : {}),
  };
}

/** Sub-requests of a plan; all name the reply partition the aggregate has affinity with. */
async function subRequestsOf(ctx: FaninContext, plan: Plan): Promise<SubRequest[]> {
  const replyTo = await ctx.replies.replyTo(plan.aggregateId);
  return plan.subRequests.map((sub, index) => ({
    target: sub.target,
    body: JSON.stringify(sub.body),
    attributes: {
      [WireAttribute.AGGREGATE_ID]: plan.aggregateId,
      [WireAttribute.REPLY_ID]: String(index),
      [WireAttribute.DEFINITION]: plan.definition.name,
      [WireAttribute.REPLY_TO]: replyTo,
      [WireAttribute.REQUEST_ID]: plan.requestId,
    },
    deduplicationId: createHash('sha256').update(`${plan.aggregateId}/${index}`).digest('hex'),
    groupId: plan.aggregateId.slice(0, 128),
  }));
}

function stringOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}
