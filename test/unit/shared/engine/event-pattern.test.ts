import { describe, expect, it } from 'vitest';
import { matchesPattern } from '../../../../shared/engine/event-pattern.ts';

/**
 * An external event matched against a definition's `externalEventPattern` (docs/definitions.md),
 * with EventBridge's own semantics for the subset fanin's definitions use.
 */
const APPROVED = { source: ['example.orders'], 'detail-type': ['OrderApproved'] };
const EVENT = {
  source: 'example.orders',
  'detail-type': 'OrderApproved',
  detail: { aggregateId: 'o-1', amount: 120, tags: ['rush', 'gift'], region: 'eu-west-1' },
};

describe('matching an event against an EventBridge pattern', () => {
  it.each<[string, Record<string, unknown>, unknown, boolean]>([
    ["the docs' pattern, source and detail type allowed", APPROVED, EVENT, true],
    ['another detail type', APPROVED, { ...EVENT, 'detail-type': 'OrderRejected' }, false],
    ['a field the pattern needs is absent', APPROVED, { source: 'example.orders' }, false],
    ['one of several allowed values', { source: ['a', 'example.orders'] }, EVENT, true],
    ['nested objects', { detail: { region: ['eu-west-1'] } }, EVENT, true],
    ['nested objects, another value', { detail: { region: ['us-east-1'] } }, EVENT, false],
    ['a nested pattern over a value that is not an object', { source: { x: ['y'] } }, EVENT, false],
    [
      'an array in the event matches when any element is allowed',
      { detail: { tags: ['gift'] } },
      EVENT,
      true,
    ],
    ['an array in the event, no element allowed', { detail: { tags: ['slow'] } }, EVENT, false],
    ['prefix', { detail: { region: [{ prefix: 'eu-' }] } }, EVENT, true],
    ['prefix not matched', { detail: { region: [{ prefix: 'us-' }] } }, EVENT, false],
    ['prefix on a number', { detail: { amount: [{ prefix: '1' }] } }, EVENT, false],
    ['anything-but one value', { detail: { region: [{ 'anything-but': 'us-east-1' }] } }, EVENT, true],
    ['anything-but that value', { detail: { region: [{ 'anything-but': 'eu-west-1' }] } }, EVENT, false],
    ['anything-but a list', { detail: { region: [{ 'anything-but': ['a', 'eu-west-1'] }] } }, EVENT, false],
    ['anything-but over an absent field', { detail: { missing: [{ 'anything-but': 'x' }] } }, EVENT, false],
    ['exists true, present', { detail: { aggregateId: [{ exists: true }] } }, EVENT, true],
    ['exists true, absent', { detail: { missing: [{ exists: true }] } }, EVENT, false],
    ['exists false, absent', { detail: { missing: [{ exists: false }] } }, EVENT, true],
    ['exists false, present', { detail: { aggregateId: [{ exists: false }] } }, EVENT, false],
    ['numeric =', { detail: { amount: [{ numeric: ['=', 120] }] } }, EVENT, true],
    ['numeric range > and <=', { detail: { amount: [{ numeric: ['>', 100, '<=', 120] }] } }, EVENT, true],
    ['numeric range, above it', { detail: { amount: [{ numeric: ['>', 0, '<', 120] }] } }, EVENT, false],
    ['numeric >=', { detail: { amount: [{ numeric: ['>=', 120] }] } }, EVENT, true],
    ['numeric <', { detail: { amount: [{ numeric: ['<', 120] }] } }, EVENT, false],
    ['numeric over a string', { detail: { region: [{ numeric: ['>', 0] }] } }, EVENT, false],
    ['numeric with an unknown operator', { detail: { amount: [{ numeric: ['!=', 1] }] } }, EVENT, false],
    [
      'numeric with an operand that is not a number',
      { detail: { amount: [{ numeric: ['>', '1'] }] } },
      EVENT,
      false,
    ],
    ['an unknown operator', { detail: { amount: [{ suffix: '0' }] } }, EVENT, false],
    ['a rule that is neither a list nor an object', { source: 'example.orders' }, EVENT, false],
    ['an empty pattern matches any event', {}, EVENT, true],
  ])('%s', (_, pattern, event, matches) => {
    expect(matchesPattern(pattern, event)).toBe(matches);
  });

  it.each([null, 'event', 42, undefined])('never matches an event that is not an object (%j)', (event) => {
    expect(matchesPattern({}, event)).toBe(false);
  });
});
