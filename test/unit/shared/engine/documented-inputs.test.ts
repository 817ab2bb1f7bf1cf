import { describe, expect, it } from 'vitest';
import { failureOf } from '../../../../shared/engine/completion/failures.ts';
import { decide } from '../../../../shared/engine/completion/plan.ts';
import { predicateHolds, predicateInput } from '../../../../shared/engine/completion/predicate-evaluation.ts';
import { Outcome } from '../../../../shared/engine/constants.ts';
import { effectiveParameters, parseDefinition } from '../../../../shared/engine/definition.ts';

/**
 * What docs/definitions.md ("Completion predicate") and docs/wire-contract.md (the outputs table,
 * "Failed reply") tell a reader who has only the docs, held against the engine.
 */

const quorum = parseDefinition({
  name: 'quorum',
  completion: { strategy: 'predicate', expression: '$count(replies[vote = "yes"]) >= request.body.quorum' },
  timeoutSeconds: 60,
});
const reply = (replyId: string, body: unknown) => ({ replyId, body, receivedAt: 1 });

describe('a completion predicate sees what definitions.md says', () => {
  it('received is a number (failures included), request.body is the whole request message, parameters the definition’s when the request sets none', async () => {
    // Prepare: the request as the producer sent it, with no parameters of its own
    const request = { body: { definition: 'quorum', payload: { loan: 1000 }, quorum: 2 }, labels: null };
    const input = predicateInput(
      [reply('0', { vote: 'yes' }), reply('1', { vote: 'yes' })],
      [{ replyId: '2', error: 'down', body: null }],
      { aggregateId: 'q-1', definition: 'quorum', params: effectiveParameters(quorum), request },
    );

    // Assess
    expect(input.received).toBe(3);
    expect(input.parameters).toEqual({ timeoutSeconds: 60 });
    expect(
      await predicateHolds('request.body.payload.loan = 1000 and request.body.definition = "quorum"', input),
    ).toBe(true);
    expect(await predicateHolds('$count(replies[vote = "yes"]) >= request.body.quorum', input)).toBe(true);
  });
});

describe('what ends timed out (wire-contract.md, the outputs table)', () => {
  it.each([
    ['predicate', { strategy: 'predicate', expression: 'false' }],
    ['any', { strategy: 'any', rules: [{ rule: 'count', count: 5 }] }],
  ])('a %s aggregate at its deadline is timed out', (_name, completion) => {
    const definition = parseDefinition({ name: 'd', completion, timeoutSeconds: 5 });
    const decision = decide(
      definition,
      { received: 1, params: effectiveParameters(definition), predicate: false },
      {
        type: 'deadline',
      },
    );
    expect(decision).toMatchObject({ complete: true, outcome: Outcome.TIMED_OUT });
  });
});

describe('fanin-failure (wire-contract.md, "Failed reply")', () => {
  it('a value of only whitespace (SQS refuses an empty one) reads failed; text is folded to one line', () => {
    expect(failureOf({ 'fanin-failure': ' \n\t ' })).toBe('failed');
    expect(failureOf({ 'fanin-failure': 'credit\n check   down' })).toBe('credit check down');
    expect(failureOf({})).toBeUndefined();
  });
});
