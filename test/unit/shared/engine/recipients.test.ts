import { describe, expect, it } from 'vitest';
import {
  checkRecipient,
  policyFromQueueUrl,
  type RecipientPolicy,
  recipientListTargets,
} from '../../../../shared/engine/recipients.ts';
import { BadMessageError } from '../../../../shared/errors.ts';

const OWN = '123456789012';
const OTHER = '999999999999';
const PARTNER = '210987654321';

/** fanin deployed in eu-west-1 of account OWN, with PARTNER allowed (the construct's recipientAccounts). */
const policy: RecipientPolicy = policyFromQueueUrl(
  `https://sqs.eu-west-1.amazonaws.com/${OWN}/fanin-ingress`,
  [PARTNER],
);

/**
 * Request-time recipients are untrusted input: only queues of this account (and the allowed
 * ones) may be targets, and a URL's host never matters (the sender resolves account + name on
 * the configured endpoint).
 */
describe('checkRecipient', () => {
  it.each([
    ['a queue name', 'bank-a'],
    ['a FIFO queue name', 'quotes_1.fifo'],
    ['a name of 80 characters', 'q'.repeat(80)],
    ['an own-account URL', `https://sqs.eu-west-1.amazonaws.com/${OWN}/bank-a`],
    ['an own-account legacy URL', `https://eu-west-1.queue.amazonaws.com/${OWN}/bank-a`],
    ['an own-account FIFO URL', `https://sqs.eu-west-1.amazonaws.com/${OWN}/bank-a.fifo`],
    ['an allowed account URL', `https://sqs.eu-west-1.amazonaws.com/${PARTNER}/bank-b`],
    // The host is ignored: the queue is looked up by account and name on fanin's endpoint.
    ['another host with the own account path', `http://127.0.0.1:9/${OWN}/bank-a`],
  ])('accepts %s', (_, target) => {
    expect(checkRecipient(target, policy)).toBe(target);
  });

  it.each([
    ['a foreign account URL', `https://sqs.eu-west-1.amazonaws.com/${OTHER}/bank-a`, `account ${OTHER}`],
    ['a foreign account on another host', `http://evil.example/${OTHER}/x`, `account ${OTHER}`],
    [
      'another region of the own account',
      `https://sqs.us-east-1.amazonaws.com/${OWN}/bank-a`,
      'region us-east-1',
    ],
    ['an AWS host that is no regional SQS endpoint', `https://s3.amazonaws.com/${OWN}/bank-a`, 'AWS host'],
    ['a URL without an account path', 'http://evil.example/collect', 'path'],
    ['a URL with a longer path', `http://evil.example/${OWN}/bank-a/more`, 'path'],
    ['a URL with a query', `https://sqs.eu-west-1.amazonaws.com/${OWN}/bank-a?x=1`, 'query'],
    ['a URL with user info', `https://user:pw@sqs.eu-west-1.amazonaws.com/${OWN}/bank-a`, 'user info'],
    ['another scheme', `ftp://sqs.eu-west-1.amazonaws.com/${OWN}/bank-a`, 'ftp:'],
    ['an ARN', `arn:aws:sqs:eu-west-1:${OWN}:bank-a`, 'arn:'],
    ['a name with a space', 'bank a', 'not a queue name'],
    ['a name of 81 characters', 'q'.repeat(81), 'not a queue name'],
    ['an empty name', '', 'not a queue name'],
    ['a URL naming no queue', `https://sqs.eu-west-1.amazonaws.com/${OWN}/bank%2Fa`, 'not a queue name'],
  ])('refuses %s, naming the recipient and why', (_, target, why) => {
    let error: unknown;
    try {
      checkRecipient(target, policy);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BadMessageError);
    expect((error as Error).message).toContain(`recipient "${target}"`);
    expect((error as Error).message).toContain(why);
  });

  it('without allowed accounts, only the own account passes', () => {
    const own = policyFromQueueUrl(`https://sqs.eu-west-1.amazonaws.com/${OWN}/fanin-ingress`);
    expect(() => checkRecipient(`https://sqs.eu-west-1.amazonaws.com/${PARTNER}/bank-b`, own)).toThrow(
      BadMessageError,
    );
    expect(checkRecipient(`https://sqs.eu-west-1.amazonaws.com/${OWN}/bank-b`, own)).toContain(OWN);
  });
});

describe('policyFromQueueUrl', () => {
  it('reads account and region from an AWS queue URL', () => {
    expect(policyFromQueueUrl(`https://sqs.eu-west-1.amazonaws.com/${OWN}/x`, [PARTNER])).toEqual({
      ownAccount: OWN,
      region: 'eu-west-1',
      accounts: [PARTNER],
      ownQueues: [],
    });
  });

  it("reads the account from an emulator's URL and leaves the region unchecked", () => {
    const local = policyFromQueueUrl('http://127.0.0.1:4566/000000000000/fanin-ingress');
    expect(local).toEqual({ ownAccount: '000000000000', accounts: [], ownQueues: [] });
    expect(checkRecipient('http://sqs.us-east-1.localhost:4566/000000000000/bank', local)).toBeTruthy();
    expect(() => checkRecipient(`http://127.0.0.1:4566/${OWN}/bank`, local)).toThrow(/account/);
  });

  it('refuses an allowed account that is not 12 digits (a deployment error)', () => {
    expect(() => policyFromQueueUrl(`https://sqs.eu-west-1.amazonaws.com/${OWN}/x`, ['*'])).toThrow(
      /12-digit/,
    );
  });
});

describe("fanin's own queues", () => {
  const base = `https://sqs.eu-west-1.amazonaws.com/${OWN}`;
  const policy = policyFromQueueUrl(
    `${base}/fanin-ingress`,
    [],
    [
      `${base}/fanin-ingress`,
      `${base}/fanin-control`,
      `${base}/fanin-out-completed.fifo`,
      `${base}/fanin-reply-0`,
    ],
  );

  // A recipient that is fanin's own queue would let a request make the fan-out forge a reply, a
  // control command or a result with fanin's own role (mutant killed: no own-queue check).
  it.each([
    'fanin-control',
    'fanin-reply-0',
    'fanin-out-completed.fifo',
    'fanin-ingress-dlq',
    'fanin-out-completed-dlq.fifo',
    `${base}/fanin-control`,
    `http://elsewhere.example/${OWN}/fanin-reply-0`,
  ])('refuses %s as a recipient', (target) => {
    expect(() => checkRecipient(target, policy)).toThrow(/fanin's own queues/);
  });

  it('still accepts the responders of the same account', () => {
    expect(checkRecipient('fanin-bank-1', policy)).toBe('fanin-bank-1');
  });
});

/**
 * The targets of a recipient list, the one rule the fan-out sends by and a cancellation
 * recomputes its queues by: the definition's recipients as given, else the request's, checked.
 */
describe('recipientListTargets', () => {
  it("takes the definition's own recipients as they are, over the request's", () => {
    expect(
      recipientListTargets({ recipients: ['bank-a', 'bank-b'] }, { recipients: ['x'] }, policy, 10),
    ).toEqual({
      targets: ['bank-a', 'bank-b'],
      named: false,
    });
  });

  it('checks every recipient the request names, as checkRecipient does', () => {
    expect(recipientListTargets({}, { recipients: ['q-1', 'q-2'] }, policy, 10)).toEqual({
      targets: ['q-1', 'q-2'],
      named: true,
    });
    expect(() =>
      recipientListTargets(
        {},
        { recipients: ['q-1', `https://sqs.eu-west-1.amazonaws.com/${OTHER}/q`] },
        policy,
        10,
      ),
    ).toThrow(BadMessageError);
  });

  it('refuses no recipients, a non-string or empty one, and more than the fan-out limit', () => {
    for (const recipients of [undefined, [], ['q', ''], ['q', 3]]) {
      expect(() => recipientListTargets({}, { recipients }, policy, 10)).toThrow(
        /a recipient list needs recipients/,
      );
    }
    expect(() => recipientListTargets({}, { recipients: ['a', 'b', 'c'] }, policy, 2)).toThrow(
      'fan-out of 3 exceeds the limit of 2',
    );
  });
});
