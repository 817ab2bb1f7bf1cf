import { describe, expect, it } from 'vitest';
import { cancellationsOf, cancels } from '../../../../shared/engine/cancellation.ts';
import { policyFromQueueUrl } from '../../../../shared/engine/recipients.ts';
import { aDefinition } from './factories.ts';

/**
 * Who is sent a cancellation notice when an aggregate ends: the recipients asked (below
 * `askedUpTo`) with no recorded reply, each at the queue its sub-request went to, recomputed from
 * the definition and the stored request as the fan-out computes them. The module's own fast test;
 * test/integration/guarantees/cancellation.test.ts observes the notices on the emulators.
 */
const OWN = '123456789012';
const policy = policyFromQueueUrl(
  `https://sqs.eu-west-1.amazonaws.com/${OWN}/fanin-ingress`,
  [],
  [`https://sqs.eu-west-1.amazonaws.com/${OWN}/fanin-replies-0`],
);

const splitter = aDefinition({
  name: 'pick',
  completion: { strategy: 'first' },
  fanOut: { type: 'splitter', itemsPath: '$.items', target: 'pickers' },
  cancelOutstanding: true,
});
const fixedList = aDefinition({
  name: 'banks',
  completion: { strategy: 'first' },
  fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b', 'bank-c'] },
  cancelOutstanding: true,
});
const namedList = aDefinition({
  name: 'quotes',
  completion: { strategy: 'first' },
  fanOut: { type: 'recipient-list' },
  cancelOutstanding: true,
});
const none = new Set<string>();

describe('cancellationsOf', () => {
  it('a splitter: every asked item without a reply, at the splitter target', () => {
    expect(
      cancellationsOf(splitter, { expected: 4, askedUpTo: 4 }, new Set(['2']), undefined, policy),
    ).toEqual([
      { replyId: '0', target: 'pickers' },
      { replyId: '1', target: 'pickers' },
      { replyId: '3', target: 'pickers' },
    ]);
  });

  it("a recipient list of the definition's own: each recipient at its own queue, by reply id", () => {
    expect(
      cancellationsOf(fixedList, { expected: 3, askedUpTo: 3 }, new Set(['0']), undefined, policy),
    ).toEqual([
      { replyId: '1', target: 'bank-b' },
      { replyId: '2', target: 'bank-c' },
    ]);
  });

  it("a recipient list the request named: the stored request's recipients, in order", () => {
    const request = { body: { recipients: ['q-x', 'q-y'], payload: {} }, labels: ['ignored', 'ignored'] };
    expect(cancellationsOf(namedList, { expected: 2, askedUpTo: 2 }, none, request, policy)).toEqual([
      { replyId: '0', target: 'q-x' },
      { replyId: '1', target: 'q-y' },
    ]);
  });

  it('nothing for a recipient never asked: only reply ids below askedUpTo', () => {
    expect(cancellationsOf(fixedList, { expected: 3, askedUpTo: 1 }, none, undefined, policy)).toEqual([
      { replyId: '0', target: 'bank-a' },
    ]);
    expect(cancellationsOf(fixedList, { expected: 3, askedUpTo: 0 }, none, undefined, policy)).toEqual([]);
  });

  it('nothing for a recipient that replied, failed or not: every reply id recorded counts', () => {
    expect(
      cancellationsOf(fixedList, { expected: 3, askedUpTo: 3 }, new Set(['0', '1', '2']), undefined, policy),
    ).toEqual([]);
  });

  it('nothing for a definition that does not opt in', () => {
    const { cancelOutstanding: _, ...plain } = fixedList;
    expect(cancels(plain)).toBe(false);
    expect(cancellationsOf(plain, { expected: 3, askedUpTo: 3 }, none, undefined, policy)).toEqual([]);
    expect(cancellationsOf(undefined, { expected: 3, askedUpTo: 3 }, none, undefined, policy)).toEqual([]);
  });

  it('nothing when the header does not say who was asked (a header from before askedUpTo) or expects nothing', () => {
    expect(cancellationsOf(fixedList, { expected: 3 }, none, undefined, policy)).toEqual([]);
    expect(cancellationsOf(fixedList, { askedUpTo: 3 }, none, undefined, policy)).toEqual([]);
  });

  it('never past the expected count, whatever askedUpTo says', () => {
    expect(cancellationsOf(splitter, { expected: 2, askedUpTo: 500 }, none, undefined, policy)).toHaveLength(
      2,
    );
  });

  it('nothing when the stored request cannot be the one the fan-out planned from', () => {
    const header = { expected: 2, askedUpTo: 2 };
    // gone (no kept request), of another length, or naming a queue the fan-out would refuse
    expect(cancellationsOf(namedList, header, none, undefined, policy)).toEqual([]);
    expect(cancellationsOf(namedList, header, none, { body: { recipients: ['q-x'] } }, policy)).toEqual([]);
    expect(
      cancellationsOf(namedList, header, none, { body: { recipients: ['q-x', 'fanin-replies-0'] } }, policy),
    ).toEqual([]);
    expect(
      cancellationsOf(
        namedList,
        header,
        none,
        { body: { recipients: ['q-x', 'https://sqs.eu-west-1.amazonaws.com/999999999999/evil'] } },
        policy,
      ),
    ).toEqual([]);
  });
});
