import type { CommandSpec } from './io.ts';

/**
 * What each command is called, takes and says in its help — kept apart from what it does, so
 * `fanin --help` and `fanin <command> --help` answer without loading the AWS SDK.
 */

/** What `fanin tail` reads: the output queues (OUTPUT_ROLES of the topology, without loading it). */
export const OUTPUTS = ['completed', 'timed-out', 'unknown', 'late', 'error', 'status'] as const;

const WAIT_OPTIONS = {
  wait: { type: 'boolean', description: 'wait until the aggregate(s) closed, showing progress' },
  timeout: {
    type: 'string',
    placeholder: 'seconds',
    description: 'with --wait: give up after this long and exit 1 (default 60)',
  },
} as const;

const TARGET_OPTIONS = {
  'aggregate-id': { type: 'string', placeholder: 'id', description: 'one aggregate' },
  definition: { type: 'string', placeholder: 'name', description: 'every active aggregate of a definition' },
  all: { type: 'boolean', description: 'every active aggregate' },
} as const;

/** `fanin send`. */
export const send: CommandSpec = {
  name: 'send',
  summary: 'Send a request to fanin (ingress queue): it opens an aggregate and fans out.',
  usage: '<definition> [--payload <json>] [--body <json>] [options]',
  arguments: [{ name: 'definition', description: 'the definition to open an aggregate of' }],
  details:
    'The request body is --body (a JSON object; default {}) with --payload, --recipients and --expected\n' +
    'set on it. The aggregate id is --aggregate-id, or <definition>-<random> so you can `fanin show` it.',
  options: {
    payload: { type: 'string', placeholder: 'json', description: 'body.payload: what each recipient gets' },
    body: { type: 'string', placeholder: 'json', description: 'the whole request body (a JSON object)' },
    recipients: {
      type: 'string',
      placeholder: 'q1,q2',
      description: 'body.recipients: queue names of a recipient list without fixed recipients',
    },
    expected: {
      type: 'string',
      placeholder: 'n',
      description: 'body.expected: replies to expect (fan-out none)',
    },
    'aggregate-id': { type: 'string', placeholder: 'id', description: 'the aggregate id to open' },
    'request-id': { type: 'string', placeholder: 'id', description: 'idempotency key (default: random)' },
    ...WAIT_OPTIONS,
  },
  examples: [
    'fanin send loan-broker --payload \'{"amount":250000,"termYears":30}\' --wait',
    'fanin send order-approval --aggregate-id order-42 --expected 2',
  ],
};

/** `fanin reply`. */
export const reply: CommandSpec = {
  name: 'reply',
  summary: 'Send a reply: answer the next sub-request on a responder queue, or publish one directly.',
  usage: '(--from <queue> | --aggregate-id <id> | --definition <name>) --body <json> [options]',
  details:
    'With --from, the next sub-request waiting on that queue is answered as the wire contract says:\n' +
    'the body goes to its fanin-reply-to partition with its fanin-* attributes, then it is deleted.\n' +
    'Otherwise the reply is published to the reply destination: routed by affinity to the aggregate\n' +
    '(or balanced), or to --partition. A self-starting definition (auction) needs only --definition.',
  options: {
    body: { type: 'string', placeholder: 'json', description: 'the reply body (required)' },
    from: {
      type: 'string',
      placeholder: 'queue',
      description: 'a responder queue (bank-1, a name or a URL)',
    },
    'aggregate-id': { type: 'string', placeholder: 'id', description: 'fanin-aggregate-id of the reply' },
    'reply-id': {
      type: 'string',
      placeholder: 'id',
      description: 'fanin-reply-id (duplicates are recognised by it)',
    },
    definition: { type: 'string', placeholder: 'name', description: 'fanin-definition of the reply' },
    partition: {
      type: 'string',
      placeholder: 'n',
      description: 'send to this reply partition, whatever its state',
    },
    'wait-for': {
      type: 'string',
      placeholder: 'seconds',
      description: 'with --from: how long to wait for a sub-request (default 10)',
    },
  },
  examples: [
    'fanin reply --from bank-1 --body \'{"bank":"bank-1","rate":3.2}\'',
    'fanin reply --aggregate-id order-42 --reply-id 0 --body \'{"approved":true}\'',
    'fanin reply --definition auction --body \'{"auctionId":"lot-1","bidId":"b1","price":120}\'',
  ],
};

/** `fanin show`. */
export const show: CommandSpec = {
  name: 'show',
  summary: 'Show an aggregate: its header (or tombstone), recorded replies and held unknown replies.',
  usage: '<aggregate-id> [--json]',
  arguments: [{ name: 'aggregate-id', description: 'the aggregate to show' }],
  details:
    'Reads the state table directly. A closed aggregate shows its tombstone; its reply items stay until their TTL (the state life) removes them.\n' +
    "For a definition with responders it ends with each recipient's fate (reply id, label, fate, deadline, last heartbeat):\n" +
    "the result's once the aggregate is sealed, the fates so far, computed now, while it is open.",
  options: {},
  examples: ['fanin show loan-broker-1a2b3c4d', 'fanin show auction:lot-1 --json'],
};

/** `fanin history`. */
export const history: CommandSpec = {
  name: 'history',
  summary:
    'The history of one aggregate: opened, sub-requests, replies, deadline moves, seal, outputs, late and unknown replies.',
  usage: '<aggregate-id> [--json]',
  arguments: [{ name: 'aggregate-id', description: 'the aggregate whose history to show' }],
  details:
    'Reads every item the state table keeps of the aggregate (read-only: one consistent query of its key, one per\n' +
    'write shard) and prints them as a timeline, oldest first, then what the items cannot tell. A closed\n' +
    "aggregate's history lives as long as its tombstone (tombstoneRetentionSeconds, 30 days by default).",
  options: {},
  examples: [
    'fanin history loan-broker-1a2b3c4d',
    'fanin history my-loan --json',
    'fanin history my-loan --stack fanin',
  ],
};

/** `fanin list`. */
export const list: CommandSpec = {
  name: 'list',
  summary: 'List active (open or completing) aggregates, oldest first, a page at a time.',
  usage: '[--definition <name>] [--limit <n>] [--cursor <cursor>] [--publish] [--json]',
  details:
    "Reads the state table's `due` index (keys only), then each active aggregate. It shows up to --limit aggregates\n" +
    '(100 by default); when there are more it ends with the command that shows the next page (--cursor). With\n' +
    '--publish, also sends the control command `list`, which publishes one page (up to 100) to the status output\n' +
    '(the list of active aggregates), with `next` when there are more.',
  options: {
    definition: { type: 'string', placeholder: 'name', description: 'only this definition' },
    limit: { type: 'string', placeholder: 'n', description: 'aggregates a page shows (1-1000, default 100)' },
    cursor: { type: 'string', placeholder: 'cursor', description: 'start where the previous page ended' },
    publish: { type: 'boolean', description: 'also publish the list on the status output (control command)' },
  },
  examples: [
    'fanin list',
    'fanin list --definition loan-broker --json',
    'fanin list --limit 20 --cursor WzMsMTc2NDQ1MDAyMDAwMCwiQSNxLTEiLCJIIl0',
  ],
};

/** `fanin purge`. */
export const purge: CommandSpec = {
  name: 'purge',
  summary:
    'Purge aggregates (control command): they end without a result; a purged notice goes to the status output.',
  usage: '(--aggregate-id <id> | --definition <name> | --all) [--wait] [options]',
  options: { ...TARGET_OPTIONS, ...WAIT_OPTIONS },
  examples: ['fanin purge --aggregate-id order-42 --wait', 'fanin purge --all'],
};

/** `fanin complete`. */
export const complete: CommandSpec = {
  name: 'complete',
  summary:
    'Complete aggregates now with what they have: a complete command, or an external (EventBridge) event.',
  usage:
    '(--aggregate-id <id> | --definition <name> | --all | --event <json> | --source <s> --detail-type <t>) [options]',
  details:
    'An event (--event, or --source/--detail-type/--detail) is delivered to the control queue as the\n' +
    "stack's EventBridge rule would: detail.aggregateId completes that aggregate; otherwise every open\n" +
    'aggregate of the definition whose externalEventPattern matches the event.',
  options: {
    ...TARGET_OPTIONS,
    event: { type: 'string', placeholder: 'json', description: 'a whole EventBridge event' },
    source: { type: 'string', placeholder: 'source', description: 'the event source (e.g. example.orders)' },
    'detail-type': {
      type: 'string',
      placeholder: 'type',
      description: 'the event detail-type (e.g. OrderApproved)',
    },
    detail: { type: 'string', placeholder: 'json', description: 'the event detail (default {})' },
    ...WAIT_OPTIONS,
  },
  examples: [
    'fanin complete --aggregate-id order-42 --wait',
    'fanin complete --source example.orders --detail-type OrderApproved --detail \'{"aggregateId":"order-42"}\'',
  ],
};

/** `fanin setParameters`. */
export const setParameters: CommandSpec = {
  name: 'set-parameters',
  summary:
    'Change runtime parameters of a definition (control command); they apply to aggregates opened afterwards.',
  usage:
    '<definition> [--timeout-seconds <s>] [--threshold <x>] [--count <n>] [--recipient-timeout-seconds <s>] | --reset',
  arguments: [{ name: 'definition', description: 'the definition whose parameters change' }],
  options: {
    'timeout-seconds': { type: 'string', placeholder: 's', description: 'the deadline after opening' },
    threshold: { type: 'string', placeholder: 'x', description: 'the override threshold' },
    count: { type: 'string', placeholder: 'n', description: 'the count of strategy count' },
    'recipient-timeout-seconds': {
      type: 'string',
      placeholder: 's',
      description: "each recipient's own deadline (responders.timeoutSeconds)",
    },
    reset: { type: 'boolean', description: "back to the definition's own parameters" },
  },
  examples: ['fanin set-parameters loan-broker --threshold 3.2 --timeout-seconds 20'],
};

/** `fanin tail`. */
export const tail: CommandSpec = {
  name: 'tail',
  summary: 'Read messages from an output queue (completed, timed-out, unknown, late, error, status).',
  usage: '<output> [--count <n>] [--follow] [--consume] [--timeout <seconds>] [--json]',
  arguments: [{ name: 'output', description: 'the output queue to read', choices: OUTPUTS }],
  details:
    'tail reads without deleting: what it prints stays on the queue for its consumers, visible again as\n' +
    'soon as tail ends (while it runs each message is hidden, so it is printed once). With --consume tail\n' +
    'is a consumer: it deletes what it prints, so nothing else receives it. (--peek, the old name of the\n' +
    'default, still works and says so.) Without --count or --follow it prints what is there and stops when\n' +
    'the queue is empty. With --json each message is one line of JSON (NDJSON): { output, messageId,\n' +
    'sentAt, body }, sentAt ISO 8601 (when SQS took the message), body as fanin sent it.',
  options: {
    count: {
      type: 'string',
      placeholder: 'n',
      description: 'stop after n messages (exit 1 if fewer came within --timeout)',
    },
    follow: { type: 'boolean', short: 'f', description: 'keep reading until Ctrl-C' },
    consume: { type: 'boolean', description: 'delete what tail prints (it consumes the queue)' },
    peek: { type: 'boolean', description: 'deprecated: reading without deleting is the default' },
    timeout: {
      type: 'string',
      placeholder: 'seconds',
      description: 'with --count: give up after this long (default 60)',
    },
  },
  examples: [
    'fanin tail completed --follow',
    'fanin tail error --json',
    'fanin tail completed --count 1 --timeout 30',
    'fanin tail completed --consume     # take the results off the queue',
  ],
};

/** `fanin completion`. */
export const completion: CommandSpec = {
  name: 'completion',
  summary: 'Print a shell completion script for fanin (bash or zsh).',
  usage: '<shell>',
  arguments: [{ name: 'shell', description: 'the shell to complete in', choices: ['bash', 'zsh'] }],
  details:
    "Completes the commands, their options and the outputs of tail. Load it in your shell's startup file:\n" +
    'bash: source <(npx fanin completion bash) in ~/.bashrc; zsh: source <(npx fanin completion zsh) in ~/.zshrc.',
  options: {},
  examples: ['source <(npx fanin completion bash)', 'npx fanin completion zsh > ~/.fanin-completion.zsh'],
};

/** `fanin redrive`. */
export const redrive: CommandSpec = {
  name: 'redrive',
  summary: "Move the messages of a queue's dead-letter queue back to the queue, with a progress display.",
  usage: '<queue> [--max <n>] [--json]',
  arguments: [{ name: 'queue', description: 'the queue whose DLQ is moved back to it' }],
  details:
    'queue: a role (ingress, control, timer, backlog, completed, ...), reply-<n>, a responder queue\n' +
    '(bank-1) or a queue name. Each message is sent back, then deleted from the DLQ; on a FIFO queue\n' +
    'it keeps its message group and gets a deduplication id derived from its DLQ message id.',
  options: {
    max: { type: 'string', placeholder: 'n', description: 'move at most n messages' },
  },
  examples: ['fanin redrive reply-0', 'fanin redrive ingress --max 100 --json'],
};

/** `fanin endpoints`. */
export const endpoints: CommandSpec = {
  name: 'endpoints',
  summary: 'Show where everything is: endpoints, queue URLs, table, bucket, dashboard.',
  usage: '[--json]',
  details:
    'For the local runtime this is its state file (.fanin/runtime.json); for --stack, what the names\n' +
    'resolve to in the account and region of your AWS settings.',
  options: {},
  examples: ['fanin endpoints', 'fanin endpoints --json | jq -r .queues.ingress.url'],
};

/** `fanin partitions`. */
export const partitions: CommandSpec = {
  name: 'partitions',
  summary: "Show the reply partitions: depth, enabled, availability, watermarks and the distributor's view.",
  usage: '[--json]',
  details:
    'A partition is unavailable when send-disabled, at its high threshold, or unreachable; producers then\n' +
    'route around it (its consumer keeps draining it). The distributor feeds partitions at or below the\n' +
    'low watermark from the backlog, up to the high watermark.',
  options: {},
  examples: ['fanin partitions', 'fanin partitions --json | jq ".partitions[].depth"'],
};

function toggle(enabled: boolean): CommandSpec {
  const verb = enabled ? 'enable' : 'disable';
  return {
    name: verb,
    summary: enabled
      ? 'Enable sends to a reply partition again.'
      : 'Disable sends to a reply partition: producers route around it; its consumer keeps draining it.',
    usage: '<partition-index> [--json]',
    arguments: [{ name: 'partition-index', description: 'the reply partition (0, 1, ...)' }],
    options: {},
    examples: [`fanin ${verb} 1`],
  };
}

/** `fanin evacuate`. */
export const evacuate: CommandSpec = {
  name: 'evacuate',
  summary:
    "Move a disabled reply partition's waiting messages to the backlog, for the others to take (scale-in).",
  usage: '<partition-index> [--force] [--json]',
  arguments: [{ name: 'partition-index', description: 'the reply partition to empty' }],
  details:
    'Step 2 of removing a partition (docs/partitions.md, "Changing the number of partitions"): disable it,\n' +
    'evacuate it, then lower replyPartitions and deploy. Each message is sent to the backlog, then deleted\n' +
    'from the partition (at least once: a duplicate is recognised by the reply path). The distributor feeds\n' +
    'the backlog to the enabled partitions on its next cycles. Messages a consumer holds at that moment\n' +
    'stay with it. An enabled partition is refused unless --force: producers would keep refilling it.',
  options: {
    force: { type: 'boolean', description: 'evacuate even though the partition is enabled for sends' },
  },
  examples: ['fanin disable 3 && fanin evacuate 3', 'fanin evacuate 3 --json'],
};

/** `fanin enable`. */
export const enable = toggle(true);
/** `fanin disable`. */
export const disable = toggle(false);

/** Every command, in the order `fanin --help` lists them. */
export const ALL: readonly CommandSpec[] = [
  send,
  reply,
  show,
  history,
  list,
  purge,
  complete,
  setParameters,
  partitions,
  enable,
  disable,
  evacuate,
  tail,
  redrive,
  endpoints,
  completion,
];
