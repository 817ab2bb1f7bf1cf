import { z } from 'zod';
import { InvalidDefinitionError } from '../errors.ts';
import { countRuleOf, thresholdRuleOf } from './completion/plan.ts';
import { CompletionSchema, type CompletionSpec } from './completion/spec.ts';
import type { EffectiveParameters, RetryParameters } from './effective-parameters.ts';
import { PathSchema, ValueSourceSchema } from './value-source.ts';

export { type CompletionRule, CompletionRuleSchema, type CompletionSpec } from './completion/spec.ts';
export type { EffectiveParameters } from './effective-parameters.ts';
export { type ValueSource, ValueSourceSchema } from './value-source.ts';

import { Algorithm, Strategy } from './constants.ts';
import { compileExpression } from './expression.ts';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const MAX_TIMEOUT_SECONDS = 365 * 24 * 3600;
const DAY_SECONDS = 24 * 3600;

/**
 * The shortest a tombstone may live: SQS keeps a message 14 days in a working queue and 14 more in
 * its dead-letter queue, from where an operator may redrive it; a day's margin covers clocks and
 * the redrive itself. Within this window after an aggregate closes, a redelivered or retried
 * request, reply or bid is recognised by the tombstone and never opens the aggregate again.
 */
export const MIN_TOMBSTONE_RETENTION_SECONDS = 29 * DAY_SECONDS;
/** The default tombstone retention: the minimum, rounded up to 30 days. */
export const DEFAULT_TOMBSTONE_RETENTION_SECONDS = 30 * DAY_SECONDS;
/**
 * The longest an aggregate may stay open by default: the sweeper times out any aggregate older
 * than its definition's `maxOpenSeconds`, so state that references it has a bounded life.
 */
export const DEFAULT_MAX_OPEN_SECONDS = 14 * DAY_SECONDS;

/** The shortest snapshot interval: well above SQS's one-second delay granularity, so snapshots cannot flood. */
export const MIN_SNAPSHOT_INTERVAL_SECONDS = 10;

const path = PathSchema;

const bounds = <T extends z.ZodNumber>(value: T) => z.strictObject({ min: value, max: value });

/** What a request may set for its own aggregate (`parameters` in its body), and within which bounds. */
export const RequestParameterBoundsSchema = z.strictObject({
  timeoutSeconds: bounds(z.int().min(1).max(MAX_TIMEOUT_SECONDS)).optional(),
  count: bounds(z.int().min(1).max(100_000)).optional(),
  threshold: bounds(z.number()).optional(),
  expected: bounds(z.int().min(0).max(10_000)).optional(),
  recipientTimeoutSeconds: bounds(z.int().min(1).max(MAX_TIMEOUT_SECONDS)).optional(),
});
export type RequestParameterBounds = z.infer<typeof RequestParameterBoundsSchema>;

const CriterionSchema = z.strictObject({ path, order: z.enum(['min', 'max']) });
const CONDENSE_FUNCTIONS = ['count', 'sum', 'avg', 'min', 'max'] as const;

const AggregationSchema = z.discriminatedUnion('algorithm', [
  z.strictObject({ algorithm: z.literal(Algorithm.COLLECT) }),
  z.strictObject({ algorithm: z.literal(Algorithm.BEST), criteria: z.array(CriterionSchema).min(1).max(8) }),
  z.strictObject({
    algorithm: z.literal(Algorithm.CONDENSE),
    field: path,
    functions: z
      .array(z.enum(CONDENSE_FUNCTIONS))
      .min(1)
      .default([...CONDENSE_FUNCTIONS]),
  }),
  z.strictObject({ algorithm: z.literal(Algorithm.CUSTOM), expression: z.string().min(1).max(8192) }),
]);

const FanOutSchema = z.discriminatedUnion('type', [
  /** One sub-request per element of the array at `itemsPath`, each sent to `target`. */
  z.strictObject({
    type: z.literal('splitter'),
    itemsPath: path,
    target: z.string().min(1),
    /** Optional label per item (e.g. its SKU), reported with missing replies. */
    labelPath: path.optional(),
  }),
  /** A copy of the request to each recipient queue (from the definition, or the request's `recipients`). */
  z.strictObject({
    type: z.literal('recipient-list'),
    recipients: z.array(z.string().min(1)).max(1000).optional(),
  }),
  /** The requester sends the sub-requests itself; the request states how many replies to expect. */
  z.strictObject({ type: z.literal('none') }),
]);

/** What each next retry interval is multiplied by when `responders.retry.backoffRate` is not given (Step Functions' default). */
export const DEFAULT_BACKOFF_RATE = 2;

/** Retries of one sub-request at most (`responders.retry.attempts`). */
export const MAX_RETRY_ATTEMPTS = 10;

/**
 * Looking after the responders of a splitter or recipient list (docs/definitions.md, "Looking
 * after the responders"): each recipient's own reply deadline, the heartbeats that extend it, and
 * the retries of its sub-request.
 */
const RespondersSchema = z.strictObject({
  /** Each recipient's reply deadline, from the open: once passed with no reply, it is settled as timed out. */
  timeoutSeconds: z.int().min(1).max(MAX_TIMEOUT_SECONDS).optional(),
  /** A recipient list's own deadlines, by recipient queue as the list names it (over `timeoutSeconds`). */
  timeouts: z.record(z.string().min(1), z.int().min(1).max(MAX_TIMEOUT_SECONDS)).optional(),
  /** A heartbeat (attribute `fanin-heartbeat`) received before its recipient's deadline extends it to the heartbeat plus this. */
  heartbeatSeconds: z.int().min(1).max(MAX_TIMEOUT_SECONDS).optional(),
  /**
   * Sending a sub-request again to a recipient that has not replied (engine/retries.ts): up to
   * `attempts` times, the first `intervalSeconds` after the open, each next interval
   * `backoffRate` (default 2) times the one before, each before the recipient's deadline.
   */
  retry: z
    .strictObject({
      attempts: z.int().min(1).max(MAX_RETRY_ATTEMPTS),
      intervalSeconds: z.int().min(1).max(MAX_TIMEOUT_SECONDS),
      backoffRate: z.number().min(1).max(10).optional(),
      /**
       * A recipient whose reply is a failure (`fanin-failure`) is asked again too, while a round
       * is left before its deadline: that failure is kept on the header, not recorded as its
       * reply; the failure of its last attempt is (engine/retries.ts, failedReplyCourse).
       */
      failedReplies: z.boolean().optional(),
    })
    .optional(),
});

export type RespondersSpec = z.infer<typeof RespondersSchema>;

/** The schema of an aggregation definition. Parse with {@link parseDefinition}. */
export const DefinitionSchema = z
  .strictObject({
    name: z.string().regex(NAME, { message: 'must be 1-64 letters, digits, - or _' }),
    description: z.string().max(1024).optional(),
    mode: z.enum(['initialized', 'self-starting']).default('initialized'),
    /** Self-starting: yields the aggregate key. Initialized: yields the aggregate id (default: attribute `fanin-aggregate-id`). */
    correlation: ValueSourceSchema.default({ source: 'attribute', name: 'fanin-aggregate-id' }),
    /** A reply's id, for deduplication (default: attribute `fanin-reply-id`, then the SQS message id). */
    replyId: ValueSourceSchema.optional(),
    completion: CompletionSchema,
    /** Failed replies tolerated before the aggregate fails (Step Functions' tolerated failure count). Default: none. */
    toleratedFailureCount: z.int().min(0).max(100_000).optional(),
    /** Share of failed replies tolerated, in percent (Step Functions' tolerated failure percentage). */
    toleratedFailurePercentage: z.number().min(0).max(100).optional(),
    /** Parameters a request may set for its own aggregate, within these bounds (initialized only). */
    requestParameters: RequestParameterBoundsSchema.optional(),
    aggregation: AggregationSchema.default({ algorithm: 'collect' }),
    fanOut: FanOutSchema.optional(),
    timeoutSeconds: z.int().min(1).max(MAX_TIMEOUT_SECONDS).optional(),
    /**
     * Camel's `completionTimeout`, Spring's `group-timeout`: the aggregate times out this long after
     * its last recorded reply (or its opening). Checked lazily: no reply writes the header.
     */
    inactivityTimeoutSeconds: z.int().min(1).max(MAX_TIMEOUT_SECONDS).optional(),
    /**
     * How long after the deadline its decision waits for replies sent (SQS `SentTimestamp`) before
     * the deadline whose handling is late (a crash: SQS hands a reply back only after its
     * visibility timeout). The deadline's timer and `due` entry are at deadline + this; replies
     * sent before the deadline and handled meanwhile are members, replies sent after it are late.
     * 0 (the default): the deadline decides at the deadline. See docs/definitions.md.
     */
    deadlineSettleSeconds: z.int().min(0).max(MAX_TIMEOUT_SECONDS).optional(),
    /**
     * Periodic release (Camel's `completionInterval`, as a progress report): every N seconds an
     * open aggregate's replies so far go to the status output as a snapshot; it stays open.
     */
    snapshotIntervalSeconds: z
      .int()
      .min(MIN_SNAPSHOT_INTERVAL_SECONDS, {
        message: `must be at least ${MIN_SNAPSHOT_INTERVAL_SECONDS} seconds, so snapshots cannot flood the status output`,
      })
      .max(MAX_TIMEOUT_SECONDS)
      .optional(),
    /**
     * A timed-out aggregate publishes its partial result (`release`, the default) or only its
     * outcome, counts and missing list (`discard`, Camel's `discardOnCompletionTimeout`).
     */
    onTimeout: z.enum(['release', 'discard']).optional(),
    unknownTimeoutSeconds: z.int().min(0).max(MAX_TIMEOUT_SECONDS).default(0),
    latePolicy: z.enum(['route', 'discard']).default('route'),
    tombstoneRetentionSeconds: z
      .int()
      .min(MIN_TOMBSTONE_RETENTION_SECONDS, {
        message: `must be at least ${MIN_TOMBSTONE_RETENTION_SECONDS} (29 days: SQS retention of the queue and its DLQ, plus a day), so a redelivered message never opens a closed aggregate again`,
      })
      .max(MAX_TIMEOUT_SECONDS)
      .default(DEFAULT_TOMBSTONE_RETENTION_SECONDS),
    /**
     * Partition keys one aggregate's replies are spread over. DynamoDB serves about 1,000 write
     * units per second per partition key; replies that share a batch are one pack per shard, so 1
     * caps one aggregate near 7,600 small replies per second in batches of ten (near 1,000 when
     * each arrives alone) and 8 about eight times that; each shard adds a read per evaluation.
     * See docs/hot-aggregates.md.
     */
    writeShards: z.int().min(1).max(16).default(1),
    /** The longest an aggregate stays open; the sweeper times it out after this, whatever its strategy. */
    maxOpenSeconds: z.int().min(60).max(MAX_TIMEOUT_SECONDS).default(DEFAULT_MAX_OPEN_SECONDS),
    outputs: z.strictObject({ eventBridge: z.boolean().default(false) }).default({ eventBridge: false }),
    /** EventBridge pattern whose events complete aggregates of this definition (delivered to the control queue). */
    externalEventPattern: z.record(z.string(), z.unknown()).optional(),
    /**
     * Whether a matching event that names no aggregate (`detail.aggregateId`) completes every open
     * aggregate of this definition (a market close). Off: such an event is refused to the error
     * output, since any principal that may put a matching event would otherwise end them all.
     */
    externalEventCompletesAll: z.boolean().default(false),
    /**
     * When an aggregate ends (completed, early or at its deadline, timed out, purged or failed),
     * each recipient that was sent a sub-request and has not replied gets a cancellation notice on
     * the queue its sub-request went to, after the terminal output, so it can stop working.
     * Needs a splitter or recipient-list fan-out. Off: nothing is read, written or sent for it.
     */
    cancelOutstanding: z.boolean().optional(),
    /** Each recipient's own reply deadline and heartbeats (splitter or recipient-list fan-out). */
    responders: RespondersSchema.optional(),
  })
  .superRefine((def, ctx) => {
    if (def.externalEventCompletesAll && def.externalEventPattern === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['externalEventCompletesAll'],
        message: 'needs an externalEventPattern (the events that complete the aggregates)',
        input: def.externalEventCompletesAll,
      });
    }
    for (const issue of completionRuleIssues(def)) ctx.addIssue({ code: 'custom', ...issue });
    if (def.cancelOutstanding && def.fanOut?.type !== 'splitter' && def.fanOut?.type !== 'recipient-list') {
      ctx.addIssue({
        code: 'custom',
        path: ['cancelOutstanding'],
        message:
          "needs a 'splitter' or 'recipient-list' fan-out: a notice goes where fanin sent a sub-request, and without one it sent none",
        input: def.cancelOutstanding,
      });
    }
    for (const issue of responderIssues(def)) ctx.addIssue({ code: 'custom', ...issue });
    const strategy = def.completion.strategy;
    if (
      (strategy === Strategy.TIMEOUT || strategy === Strategy.OVERRIDE) &&
      def.timeoutSeconds === undefined &&
      def.inactivityTimeoutSeconds === undefined
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['timeoutSeconds'],
        message: `is required by completion strategy '${strategy}' (or inactivityTimeoutSeconds)`,
        input: def.timeoutSeconds,
      });
    }
    refineTiming(def, ctx);
    if (def.mode === 'self-starting' && strategy === Strategy.ALL) {
      ctx.addIssue({
        code: 'custom',
        path: ['completion', 'strategy'],
        message: "'all' needs an expected count, which only an initialized aggregate has",
        input: strategy,
      });
    }
    if (def.mode === 'self-starting' && def.fanOut) {
      ctx.addIssue({
        code: 'custom',
        path: ['fanOut'],
        message: 'a self-starting aggregate is opened by its first reply, so it has no fan-out',
        input: def.fanOut.type,
      });
    }
    if (
      def.mode === 'self-starting' &&
      def.correlation.source === 'attribute' &&
      def.correlation.name === 'fanin-aggregate-id'
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['correlation'],
        message:
          'a self-starting definition must say where its correlation key is (e.g. { source: "path", path: "$.auctionId" })',
        input: def.correlation,
      });
    }
  });

/** What `responders` needs beyond its shape: recipients to look after, and deadlines that can matter. */
function responderIssues(def: {
  readonly fanOut?: FanOutSpec | undefined;
  readonly responders?: RespondersSpec | undefined;
  readonly timeoutSeconds?: number | undefined;
  readonly requestParameters?: RequestParameterBounds | undefined;
}): { path: (string | number)[]; message: string; input: unknown }[] {
  const issues: { path: (string | number)[]; message: string; input: unknown }[] = [];
  const responders = def.responders;
  const bounds = def.requestParameters?.recipientTimeoutSeconds;
  if (bounds && responders?.timeoutSeconds === undefined)
    issues.push({
      path: ['requestParameters', 'recipientTimeoutSeconds'],
      message: 'needs responders.timeoutSeconds (the deadline a request may change)',
      input: bounds,
    });
  if (!responders) return issues;
  const fanOut = def.fanOut;
  if (fanOut?.type !== 'splitter' && fanOut?.type !== 'recipient-list')
    issues.push({
      path: ['responders'],
      message:
        "needs a 'splitter' or 'recipient-list' fan-out: fanin looks after the recipients it sent sub-requests to",
      input: responders,
    });
  if (responders.timeouts !== undefined) {
    const listed = fanOut?.type === 'recipient-list' ? fanOut.recipients : undefined;
    if (listed === undefined)
      issues.push({
        path: ['responders', 'timeouts'],
        message: "needs a 'recipient-list' fan-out that names its recipients (fanOut.recipients)",
        input: responders.timeouts,
      });
    for (const name of Object.keys(responders.timeouts))
      if (listed && !listed.includes(name))
        issues.push({
          path: ['responders', 'timeouts', name],
          message: `names no recipient of fanOut.recipients (${listed.join(', ')})`,
          input: name,
        });
  }
  if (
    responders.timeoutSeconds === undefined &&
    responders.timeouts === undefined &&
    responders.retry === undefined
  )
    issues.push({
      path: ['responders'],
      message:
        'needs timeoutSeconds, timeouts or retry: without a recipient deadline or a retry there is nothing to look after',
      input: responders,
    });
  if (
    responders.heartbeatSeconds !== undefined &&
    responders.timeoutSeconds === undefined &&
    responders.timeouts === undefined
  )
    issues.push({
      path: ['responders', 'heartbeatSeconds'],
      message: 'needs timeoutSeconds or timeouts: a heartbeat extends a recipient deadline',
      input: responders.heartbeatSeconds,
    });
  const own = Math.max(responders.timeoutSeconds ?? 0, ...Object.values(responders.timeouts ?? {}));
  if (def.timeoutSeconds !== undefined && own >= def.timeoutSeconds)
    issues.push({
      path: ['responders'],
      message: `a recipient deadline (${own} s) must be shorter than timeoutSeconds (${def.timeoutSeconds}), or the aggregate's deadline always comes first`,
      input: responders,
    });
  // A request may set both: its recipients' deadline must be able to come before the longest
  // deadline a request may have.
  const requestTimeout = def.requestParameters?.timeoutSeconds?.max ?? def.timeoutSeconds;
  if (bounds && requestTimeout !== undefined && bounds.max >= requestTimeout)
    issues.push({
      path: ['requestParameters', 'recipientTimeoutSeconds', 'max'],
      message: `a request's recipient deadline (up to ${bounds.max} s) must be shorter than the longest timeoutSeconds a request may have (${requestTimeout} s), or the aggregate's deadline always comes first`,
      input: bounds.max,
    });
  const longest = Math.max(own, bounds?.max ?? 0);
  const retry = responders.retry;
  const end = longest > 0 ? longest : def.timeoutSeconds;
  if (retry !== undefined && end !== undefined && retry.intervalSeconds >= end)
    issues.push({
      path: ['responders', 'retry', 'intervalSeconds'],
      message: `the first retry (${retry.intervalSeconds} s after the open) must come before the ${longest > 0 ? 'longest recipient deadline' : "aggregate's deadline"} (${end} s), or no recipient is ever retried`,
      input: retry.intervalSeconds,
    });
  return issues;
}

/** The rules between the timing fields: each must be able to matter. */
function refineTiming(
  def: {
    readonly timeoutSeconds?: number | undefined;
    readonly inactivityTimeoutSeconds?: number | undefined;
    readonly deadlineSettleSeconds?: number | undefined;
    readonly maxOpenSeconds: number;
    readonly onTimeout?: 'release' | 'discard' | undefined;
    readonly completion: { readonly strategy: string };
  },
  ctx: z.RefinementCtx,
): void {
  const inactivity = def.inactivityTimeoutSeconds;
  if (inactivity !== undefined && def.timeoutSeconds !== undefined && inactivity >= def.timeoutSeconds) {
    ctx.addIssue({
      code: 'custom',
      path: ['inactivityTimeoutSeconds'],
      message: `must be shorter than timeoutSeconds (${def.timeoutSeconds}), or the absolute deadline always comes first`,
      input: inactivity,
    });
  }
  if (inactivity !== undefined && inactivity >= Math.max(def.maxOpenSeconds, def.timeoutSeconds ?? 0)) {
    ctx.addIssue({
      code: 'custom',
      path: ['inactivityTimeoutSeconds'],
      message: `must be shorter than maxOpenSeconds (${def.maxOpenSeconds}), or the allowed life always ends first`,
      input: inactivity,
    });
  }
  if (inactivity !== undefined && (def.deadlineSettleSeconds ?? 0) > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['deadlineSettleSeconds'],
      message:
        'cannot be combined with inactivityTimeoutSeconds (an inactivity deadline moves with the replies)',
      input: def.deadlineSettleSeconds,
    });
  }
  const strategy = def.completion.strategy;
  if (def.onTimeout === 'discard' && (strategy === Strategy.TIMEOUT || strategy === Strategy.OVERRIDE)) {
    ctx.addIssue({
      code: 'custom',
      path: ['onTimeout'],
      message: `'discard' has no effect with completion strategy '${strategy}': its deadline completes the aggregate with what arrived (outcome completed), and times it out only when nothing did`,
      input: def.onTimeout,
    });
  }
}

/** A validated aggregation definition, defaults applied. */
export type Definition = z.output<typeof DefinitionSchema>;
/** What a user writes: defaults may be left out. */
export type DefinitionInput = z.input<typeof DefinitionSchema>;
export type AggregationSpec = Definition['aggregation'];
export type FanOutSpec = NonNullable<Definition['fanOut']>;
export type CondenseFunction = (typeof CONDENSE_FUNCTIONS)[number];

/**
 * Validates a definition and applies its defaults. Throws {@link InvalidDefinitionError} whose
 * message names every failing field and the value received.
 *
 * @example
 * parseDefinition({ name: 'loan', completion: { strategy: 'all' } });
 */
export function parseDefinition(input: unknown): Definition {
  const parsed = DefinitionSchema.safeParse(input, { reportInput: true });
  if (parsed.success) return parsed.data;
  throw new InvalidDefinitionError(
    parsed.error.issues.map((issue) => {
      const field = issue.path.length > 0 ? issue.path.join('.') : '(definition)';
      const received = 'input' in issue ? `; received ${describeValue(issue.input)}` : '';
      return `${field}: ${issue.message}${received}`;
    }),
  );
}

/** Parses a list of definitions and rejects duplicate names. */
export function parseDefinitions(inputs: readonly unknown[]): ReadonlyMap<string, Definition> {
  const definitions = new Map<string, Definition>();
  inputs.forEach((input, index) => {
    const definition = parseDefinition(input);
    if (definitions.has(definition.name)) {
      throw new InvalidDefinitionError([
        `[${index}].name: duplicate definition name; received "${definition.name}"`,
      ]);
    }
    definitions.set(definition.name, definition);
  });
  return definitions;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** Runtime parameters a control command may change; they apply from the next aggregate on. */
export const RuntimeParametersSchema = z.strictObject({
  timeoutSeconds: z.int().min(1).max(MAX_TIMEOUT_SECONDS).optional(),
  threshold: z.number().optional(),
  count: z.int().min(1).max(100_000).optional(),
  /** A request's own recipient deadline (only from a request's `parameters`, within its bounds). */
  recipientTimeoutSeconds: z.int().min(1).max(MAX_TIMEOUT_SECONDS).optional(),
});
export type RuntimeParameters = z.infer<typeof RuntimeParametersSchema>;

/**
 * Why runtime parameters (a `set-parameters` command) cannot apply to a definition: a count or a
 * score threshold only where its completion has one to change, a recipient deadline only where
 * the definition has `responders`, as for a request's parameters.
 */
export function runtimeParameterIssues(definition: Definition, parameters: RuntimeParameters): string[] {
  const issues: string[] = [];
  const strategy = definition.completion.strategy;
  if (parameters.count !== undefined && countRuleOf(definition.completion) === undefined)
    issues.push(
      `parameters.count: completion strategy '${strategy}' of "${definition.name}" has no count to set`,
    );
  if (parameters.threshold !== undefined && thresholdRuleOf(definition.completion) === undefined)
    issues.push(
      `parameters.threshold: completion strategy '${strategy}' of "${definition.name}" has no score threshold to set`,
    );
  // A recipient deadline changes `responders.timeoutSeconds` only: without it there is none to
  // change (no responders, or only a recipient list's own `timeouts`), as for a request's bounds.
  if (parameters.recipientTimeoutSeconds !== undefined && definition.responders?.timeoutSeconds === undefined)
    issues.push(
      definition.responders === undefined
        ? `parameters.recipientTimeoutSeconds: "${definition.name}" has no responders, so no recipient deadline to set`
        : `parameters.recipientTimeoutSeconds: the responders of "${definition.name}" have no timeoutSeconds to set (only timeouts by recipient)`,
    );
  return issues;
}

/** Merges a definition's own parameters with runtime overrides. */
export function effectiveParameters(
  definition: Definition,
  overrides: RuntimeParameters = {},
): EffectiveParameters {
  const completion = definition.completion;
  const params: {
    timeoutSeconds?: number;
    inactivityTimeoutSeconds?: number;
    deadlineSettleSeconds?: number;
    threshold?: number;
    count?: number;
    recipientTimeoutSeconds?: number;
    heartbeatSeconds?: number;
    retry?: RetryParameters;
  } = {};
  const timeoutSeconds = overrides.timeoutSeconds ?? definition.timeoutSeconds;
  if (timeoutSeconds !== undefined) params.timeoutSeconds = timeoutSeconds;
  if (definition.inactivityTimeoutSeconds !== undefined)
    params.inactivityTimeoutSeconds = definition.inactivityTimeoutSeconds;
  if ((definition.deadlineSettleSeconds ?? 0) > 0)
    params.deadlineSettleSeconds = definition.deadlineSettleSeconds;
  // An override changes the definition's recipient deadline, never gives recipients one it lacks
  // (a set-parameters stored before runtimeParameterIssues refused it included).
  const ownRecipientTimeout = definition.responders?.timeoutSeconds;
  if (ownRecipientTimeout !== undefined)
    params.recipientTimeoutSeconds = overrides.recipientTimeoutSeconds ?? ownRecipientTimeout;
  if (definition.responders?.heartbeatSeconds !== undefined)
    params.heartbeatSeconds = definition.responders.heartbeatSeconds;
  const retry = definition.responders?.retry;
  if (retry !== undefined)
    params.retry = {
      attempts: retry.attempts,
      intervalSeconds: retry.intervalSeconds,
      backoffRate: retry.backoffRate ?? DEFAULT_BACKOFF_RATE,
      ...(retry.failedReplies === true ? { failedReplies: true } : {}),
    };
  const threshold = thresholdRuleOf(completion)?.threshold;
  if (threshold !== undefined) params.threshold = overrides.threshold ?? threshold;
  const count = countRuleOf(completion);
  if (count !== undefined) params.count = overrides.count ?? count;
  return params;
}

/**
 * What the completion rules, failure tolerance and request bounds require beyond their shapes: a
 * predicate that parses, each `any` rule once, bounds whose `min` is at most their `max`, and
 * request parameters only where the definition has something for them to change.
 */
function completionRuleIssues(def: {
  readonly mode: 'initialized' | 'self-starting';
  readonly completion: CompletionSpec;
  readonly fanOut?: FanOutSpec | undefined;
  readonly requestParameters?: RequestParameterBounds | undefined;
}): { path: (string | number)[]; message: string; input: unknown }[] {
  const issues: { path: (string | number)[]; message: string; input: unknown }[] = [];
  const completion = def.completion;
  const expressions: [string | undefined, (string | number)[]][] = [];
  if (completion.strategy === Strategy.PREDICATE)
    expressions.push([completion.expression, ['completion', 'expression']]);
  if (completion.strategy === Strategy.ANY) {
    const seen = new Set<string>();
    completion.rules.forEach((rule, index) => {
      if (seen.has(rule.rule))
        issues.push({
          path: ['completion', 'rules', index, 'rule'],
          message: `rule '${rule.rule}' appears twice`,
          input: rule.rule,
        });
      seen.add(rule.rule);
      if (rule.rule === 'predicate')
        expressions.push([rule.expression, ['completion', 'rules', index, 'expression']]);
      if (rule.rule === 'all-arrived' && def.mode === 'self-starting')
        issues.push({
          path: ['completion', 'rules', index, 'rule'],
          message: "'all-arrived' needs an expected count, which only an initialized aggregate has",
          input: rule.rule,
        });
    });
  }
  for (const [source, at] of expressions) {
    try {
      compileExpression(source as string);
    } catch (error) {
      issues.push({
        path: at,
        message: `is not a valid JSONata expression (${(error as Error).message})`,
        input: source,
      });
    }
  }
  const requested = def.requestParameters;
  if (requested === undefined) return issues;
  if (def.mode === 'self-starting')
    issues.push({
      path: ['requestParameters'],
      message: 'a self-starting aggregate has no request to carry parameters',
      input: requested,
    });
  for (const [name, range] of Object.entries(requested)) {
    if (range && range.min > range.max)
      issues.push({ path: ['requestParameters', name], message: 'min must be at most max', input: range });
  }
  if (requested.count && countRuleOf(completion) === undefined)
    issues.push({
      path: ['requestParameters', 'count'],
      message: `completion strategy '${completion.strategy}' has no count for a request to set`,
      input: requested.count,
    });
  if (requested.threshold && thresholdRuleOf(completion) === undefined)
    issues.push({
      path: ['requestParameters', 'threshold'],
      message: `completion strategy '${completion.strategy}' has no score threshold for a request to set`,
      input: requested.threshold,
    });
  if (requested.expected && def.fanOut !== undefined && def.fanOut.type !== 'none')
    issues.push({
      path: ['requestParameters', 'expected'],
      message: `a ${def.fanOut.type} fan-out counts its own replies; only fan-out 'none' takes an expected count from the request`,
      input: requested.expected,
    });
  return issues;
}

/**
 * The longest any item of an aggregate of this definition can be needed, in seconds: open for at
 * most `maxOpenSeconds` (or a longer deadline), a completion lease, then its tombstone retention;
 * a held reply waits at most its unknown timeout before that. Reply items are written with a TTL
 * this far ahead, and the claim-check bucket must keep stored bodies at least this long.
 */
export function stateLifeSeconds(definition: Definition, leaseSeconds: number): number {
  // The longest deadline a request may ask for extends the life as the definition's own does.
  const open = Math.max(
    definition.maxOpenSeconds,
    definition.timeoutSeconds ?? 0,
    definition.requestParameters?.timeoutSeconds?.max ?? 0,
  );
  return (
    definition.unknownTimeoutSeconds +
    (definition.deadlineSettleSeconds ?? 0) +
    open +
    leaseSeconds +
    definition.tombstoneRetentionSeconds
  );
}
