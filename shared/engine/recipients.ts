import { BadMessageError } from '../errors.ts';

/**
 * Which queues a request may name as its recipients (body.recipients). Only queues are targets:
 * a queue name (of this account and region), or a queue URL of this account, or of an account
 * the deployment allows (the construct's `recipientAccounts`, env `FANIN_RECIPIENT_ACCOUNTS`).
 */
export interface RecipientPolicy {
  /** fanin's own account (from one of its queue URLs); URLs of this account are allowed. */
  readonly ownAccount?: string;
  /** fanin's own region; a URL on an AWS host must name it. Unset: the host's region is not checked. */
  readonly region?: string;
  /** Further accounts whose queues requests may name. */
  readonly accounts: readonly string[];
  /**
   * fanin's own queues (and their DLQs), by name: never a recipient, or a request could make the
   * fan-out forge a reply, a control command or an output with fanin's own role.
   */
  readonly ownQueues?: readonly string[];
}

/** SQS's queue-name rule: 1-80 of A-Z a-z 0-9 - _, a FIFO queue's name ending in `.fifo` (within the 80). */
const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$/;
const FIFO_QUEUE_NAME = /^[A-Za-z0-9_-]{1,75}\.fifo$/;
const ACCOUNT = /^\d{12}$/;
/** A queue URL's path: `/<account>/<queue name>`. */
const QUEUE_PATH = /^\/(\d{12})\/([^/]+)$/;

/** True for an SQS queue name. */
export function isQueueName(value: string): boolean {
  return QUEUE_NAME.test(value) || FIFO_QUEUE_NAME.test(value);
}

/** The parts of a queue URL that fanin acts on; its host is never used (see {@link checkRecipient}). */
export interface QueueUrlParts {
  readonly account: string;
  readonly name: string;
  /** The region an AWS host names; undefined for any other host (an emulator, LocalStack). */
  readonly region?: string;
  /** True when the host is an AWS SQS host. */
  readonly awsHost: boolean;
}

/**
 * Parses `http(s)://<host>/<12-digit account>/<queue name>`, or returns a reason why not.
 * No user info, query or fragment; on an AWS host the region must be readable from the host.
 */
export function parseQueueUrl(value: string): QueueUrlParts | string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is neither a queue name nor a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `uses ${url.protocol}, not https`;
  if (url.username || url.password) return 'carries user info';
  if (url.search || url.hash || value.includes('?') || value.includes('#')) {
    return 'carries a query or fragment';
  }
  const path = QUEUE_PATH.exec(url.pathname);
  if (!path) return 'has no /<12-digit account>/<queue name> path';
  const [, account = '', name = ''] = path;
  if (!isQueueName(name)) return `names "${name}", which is not a queue name`;
  const host = url.hostname.toLowerCase();
  const aws = /(^|\.)amazonaws\.com(\.cn)?$/.test(host) || host.endsWith('.api.aws');
  if (!aws) return { account, name, awsHost: false };
  const region = awsRegionOf(host);
  if (!region) return `names the AWS host ${host}, which is no SQS endpoint of a region`;
  return { account, name, region, awsHost: true };
}

/** The region of an SQS host: `sqs.<r>.amazonaws.com`, `sqs-fips.<r>…`, `sqs.<r>.api.aws`, `<r>.queue.amazonaws.com`, `queue.amazonaws.com`. */
function awsRegionOf(host: string): string | undefined {
  if (host === 'queue.amazonaws.com') return 'us-east-1';
  const match =
    /^sqs(?:-fips)?\.([a-z0-9-]+)\.(?:amazonaws\.com(?:\.cn)?|api\.aws)$/.exec(host) ??
    /^([a-z0-9-]+)\.queue\.amazonaws\.com(?:\.cn)?$/.exec(host);
  return match?.[1];
}

/**
 * Checks a recipient a request names (untrusted input) and returns it unchanged when allowed:
 * - a queue name (SQS's rule), resolved in fanin's own account and region;
 * - a queue URL whose path is `/<account>/<queue name>`, with the account fanin's own or one of
 *   `policy.accounts`, and, on an AWS host, the region fanin's own.
 *
 * The URL's host is not checked beyond that and is never used: fanin's SQS client takes its
 * endpoint only from the SDK's standard configuration (`useQueueUrlAsEndpoint: false`), and the
 * sender resolves a URL target with `GetQueueUrl(QueueName, QueueOwnerAWSAccountId)` on that
 * endpoint. So `http://elsewhere/<own account>/bank` reaches the queue `bank` of fanin's account
 * on fanin's endpoint, and nothing is ever sent to `elsewhere`.
 *
 * @throws BadMessageError naming the recipient and the reason
 */
export function checkRecipient(target: string, policy: RecipientPolicy): string {
  const refuse = (reason: string): never => {
    throw new BadMessageError(
      `recipient "${target}" ${reason}; a recipient is a queue name (1-80 of A-Z a-z 0-9 - _, optional .fifo) or a queue URL https://sqs.<region>.amazonaws.com/<account>/<name> of this account${policy.accounts.length > 0 ? ' or an allowed one' : ''}`,
    );
  };
  const own = (name: string) => policy.ownQueues?.includes(name) ?? false;
  if (isQueueName(target)) return own(target) ? refuse("is one of fanin's own queues") : target;
  if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) return refuse('is not a queue name');
  const parts = parseQueueUrl(target);
  if (typeof parts === 'string') return refuse(parts);
  if (parts.account === policy.ownAccount && own(parts.name)) return refuse("is one of fanin's own queues");
  if (parts.account !== policy.ownAccount && !policy.accounts.includes(parts.account)) {
    return refuse(`names account ${parts.account}, which is neither fanin's own nor allowed`);
  }
  if (parts.awsHost && policy.region !== undefined && parts.region !== policy.region) {
    return refuse(`names region ${parts.region}, not fanin's region ${policy.region}`);
  }
  return target;
}

/**
 * The policy of a deployment, from one of fanin's own queue URLs (e.g. the ingress queue's:
 * `https://sqs.<region>.amazonaws.com/<account>/<name>`, or an emulator's
 * `http://127.0.0.1:<port>/<account>/<name>`) and the allowed extra accounts. An emulator's URL
 * gives the account but no region (the region is then not checked).
 *
 * @throws Error when an extra account is not 12 digits (a deployment error, not bad input)
 */
export function policyFromQueueUrl(
  ownQueueUrl: string,
  accounts: readonly string[] = [],
  ownQueueUrls: readonly string[] = [],
): RecipientPolicy {
  for (const account of accounts) {
    if (!ACCOUNT.test(account))
      throw new Error(`recipient account "${account}" is not a 12-digit account id`);
  }
  const ownQueues = ownQueueUrls.flatMap((url) => {
    const name = url.slice(url.lastIndexOf('/') + 1);
    const dlq = name.endsWith('.fifo') ? `${name.slice(0, -'.fifo'.length)}-dlq.fifo` : `${name}-dlq`;
    return [name, dlq];
  });
  const parts = parseQueueUrl(ownQueueUrl);
  if (typeof parts === 'string') return { accounts: [...accounts], ownQueues };
  return {
    ownAccount: parts.account,
    ...(parts.region !== undefined ? { region: parts.region } : {}),
    accounts: [...accounts],
    ownQueues,
  };
}

/**
 * The queues a recipient list sends its sub-requests to, in reply-id order: the definition's own
 * recipients, else the request's `body.recipients`, each checked by {@link checkRecipient}. The
 * fan-out computes its sub-requests' targets with it, and a cancellation recomputes them with it
 * from the stored request, so a notice goes only where its sub-request went.
 *
 * @throws BadMessageError when the request names no recipients, or one that is not allowed
 */
export function recipientListTargets(
  fanOut: { readonly recipients?: readonly string[] | undefined },
  body: Readonly<Record<string, unknown>>,
  policy: RecipientPolicy,
  maxFanOut: number,
): { readonly targets: string[]; readonly named: boolean } {
  const recipients = fanOut.recipients ?? body.recipients;
  if (Array.isArray(recipients) && recipients.length > maxFanOut)
    throw new BadMessageError(`fan-out of ${recipients.length} exceeds the limit of ${maxFanOut}`);
  if (
    !Array.isArray(recipients) ||
    recipients.length === 0 ||
    !recipients.every((r) => typeof r === 'string' && r !== '')
  ) {
    throw new BadMessageError(
      'a recipient list needs recipients: in the definition or as a non-empty array of queue names in body.recipients',
    );
  }
  // Recipients from the request are untrusted: queues only, of this account or an allowed one.
  if (fanOut.recipients) return { targets: [...(recipients as string[])], named: false };
  return { targets: (recipients as string[]).map((target) => checkRecipient(target, policy)), named: true };
}
