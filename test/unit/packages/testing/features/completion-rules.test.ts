import { describe, expect, it } from 'vitest';
import { type DefinitionInput, simulate } from '../../../../../packages/testing/src/index.ts';
import { noResult, oneResult } from './one-result.ts';

/**
 * The completion rules by the kit, on the production handlers at virtual time: a completion
 * predicate, any-of combinations reporting what completed the aggregate, failed replies within
 * and beyond the definition's tolerance, and a request's own parameters within the definition's
 * bounds. What needs a fault injected (a reply racing the predicate's seal, a completion resumed
 * after its owner failed to publish) stays in test/integration/features/completion-rules.test.ts.
 */

const quorum: DefinitionInput = {
  name: 'quorum',
  fanOut: { type: 'none' },
  // Complete once as many replies say yes as the request asks for (it reads the request).
  completion: { strategy: 'predicate', expression: '$count(replies[vote = "yes"]) >= request.body.quorum' },
  timeoutSeconds: 60,
};
const fragile: DefinitionInput = {
  name: 'fragile',
  fanOut: { type: 'none' },
  completion: { strategy: 'predicate', expression: '$error("no verdict")' },
};
const quotes: DefinitionInput = {
  name: 'quotes',
  fanOut: { type: 'none' },
  completion: {
    strategy: 'any',
    rules: [
      { rule: 'threshold', score: { source: 'path', path: '$.rate' }, threshold: 3, direction: 'below' },
      { rule: 'count', count: 3 },
      { rule: 'all-arrived' },
    ],
  },
  aggregation: { algorithm: 'best', criteria: [{ path: '$.rate', order: 'min' }] },
  timeoutSeconds: 60,
};
const survey: DefinitionInput = {
  name: 'survey',
  fanOut: { type: 'none' },
  completion: { strategy: 'all' },
  aggregation: { algorithm: 'condense', field: '$.score', functions: ['count', 'avg'] },
  toleratedFailureCount: 1,
  timeoutSeconds: 60,
};
const sized: DefinitionInput = {
  name: 'sized',
  fanOut: { type: 'none' },
  completion: { strategy: 'count', count: 3 },
  timeoutSeconds: 600,
  requestParameters: { count: { min: 1, max: 5 }, timeoutSeconds: { min: 10, max: 120 } },
  // A reply to an aggregate that does not exist goes to the unknown output at once.
  unknownTimeoutSeconds: 0,
};

const replyIds = (result: unknown) => (result as { replyId: string }[]).map((r) => r.replyId);

describe('completion rules (kit)', () => {
  it('a predicate satisfied at the third reply completes with exactly those three replies; a later one is late', async () => {
    // Prepare
    const run = simulate(quorum);
    await run.request({ aggregateId: 'q-1', expected: 5, quorum: 2 });

    // Act: one reply at a time, as a responder would send them
    await run.reply({ replyId: 'a' }, { vote: 'yes' });
    await run.reply({ replyId: 'b' }, { vote: 'no' });
    const before = run.result();
    await run.reply({ replyId: 'c' }, { vote: 'yes' });
    await run.reply({ replyId: 'd' }, { vote: 'yes' });

    // Assess (mutant killed: a predicate that is never evaluated leaves the aggregate open)
    expect(before).toBeUndefined();
    const { output } = oneResult(run, 'q-1');
    expect(output).toMatchObject({
      outcome: 'completed',
      completedBy: 'predicate',
      counts: { expected: 5, received: 3, failed: 0 },
    });
    expect(replyIds(output.result)).toEqual(['a', 'b', 'c']);
    expect(run.outputs('late').map((o) => o.replyId)).toEqual(['d']);
  });

  it('a predicate that fails ends its aggregate failed with the reason at that reply, once', async () => {
    // Prepare
    const run = simulate(fragile);
    await run.request({ aggregateId: 'f-1', expected: 3 });

    // Act: the same reply delivered twice
    await run.reply({ replyId: 'a' }, { v: 1 }, { copies: 2 });

    // Assess
    const { output, channel } = oneResult(run, 'f-1');
    expect(channel).toBe('error');
    expect(output).toMatchObject({
      type: 'fanin.aggregate.failed',
      outcome: 'failed',
      completedBy: 'predicate',
      reason: expect.stringContaining('no verdict'),
    });
  });

  it.each([
    ['a rate at or below the threshold', 'qa-threshold', 5, [4.1, 2.9], 'threshold', 2.9],
    ['the third reply', 'qa-count', 5, [4.1, 3.9, 3.5], 'count', 3.5],
    ['the last expected reply', 'qa-all', 2, [4.1, 3.9], 'all-arrived', 3.9],
  ])(
    'any-of: %s completes the aggregate and is reported as what completed it',
    async (_what, id, expected, rates, by, best) => {
      // Prepare
      const run = simulate(quotes);
      await run.request({ aggregateId: id, expected });

      // Act
      for (const [index, rate] of rates.entries()) await run.reply({ replyId: String(index) }, { rate });

      // Assess (mutant killed: reporting the first rule of the list whatever held)
      const { output } = oneResult(run, id);
      expect(output).toMatchObject({
        outcome: 'completed',
        completedBy: by,
        counts: { received: rates.length },
      });
      expect(output.result).toMatchObject({ body: { rate: best } });
    },
  );

  it('the deadline, a complete command and a purge are reported as what ended the aggregate', async () => {
    // Prepare
    const run = simulate(quotes);
    for (const id of ['qa-deadline', 'qa-complete', 'qa-purge'])
      await run.request({ aggregateId: id, expected: 5 });
    await run.reply({ aggregateId: 'qa-complete', replyId: '0' }, { rate: 4 });

    // Act
    await run.control({ command: 'complete', aggregateId: 'qa-complete' });
    await run.control({ command: 'purge', aggregateId: 'qa-purge' });
    await run.advance('61s');

    // Assess
    expect(oneResult(run, 'qa-deadline').output).toMatchObject({
      outcome: 'timed-out',
      completedBy: 'deadline',
    });
    expect(oneResult(run, 'qa-complete').output).toMatchObject({
      outcome: 'completed',
      completedBy: 'external',
    });
    expect(oneResult(run, 'qa-purge').output).toMatchObject({ outcome: 'purged', completedBy: 'purge' });
  });

  it('failed replies within the tolerance are reported beside the result, never folded into it', async () => {
    // Prepare
    const run = simulate(survey);
    await run.request({ aggregateId: 's-ok', expected: 3 });

    // Act
    await run.reply({ replyId: '0' }, { score: 4 });
    await run.fail({ replyId: '1' }, 'respondent unreachable', {
      detail: 'respondent unreachable',
      score: 0,
    });
    await run.reply({ replyId: '2' }, { score: 2 });

    // Assess (mutant killed: a failure passed to condense as a reply counts 3, its score 0 in the average)
    const { output } = oneResult(run, 's-ok');
    expect(output).toMatchObject({
      outcome: 'completed',
      completedBy: 'all-arrived',
      counts: { expected: 3, received: 3, failed: 1 },
      result: { count: 2, avg: 3 },
      failures: [
        {
          replyId: '1',
          error: 'respondent unreachable',
          body: { detail: 'respondent unreachable', score: 0 },
        },
      ],
      missing: [],
    });
  });

  it('failures beyond the tolerance end the aggregate failed at once, listing them, with one terminal output', async () => {
    // Prepare
    const run = simulate(survey);
    await run.request({ aggregateId: 's-bad', expected: 5 });
    await run.reply({ replyId: '0' }, { score: 5 });
    const failure = (replyId: string, error: string, copies = 1) =>
      run.fail({ replyId }, error, { detail: error, score: 0 }, { copies });

    // Act: the first failure delivered twice is one failure (tolerated); a second one is not
    await failure('1', 'timeout at respondent', 2);
    const whileTolerated = run.publications('error');
    await failure('2', 'refused');
    await run.reply({ replyId: '3' }, { score: 1 });

    // Assess (mutants killed: failures never counted; a duplicate failure counted twice)
    expect(whileTolerated).toHaveLength(0);
    const { output, channel } = oneResult(run, 's-bad');
    expect(channel).toBe('error');
    expect(output).toMatchObject({
      type: 'fanin.aggregate.failed',
      outcome: 'failed',
      completedBy: 'failures',
      reason: expect.stringContaining('2 replies failed, more than the 1 tolerated'),
      counts: { expected: 5, received: 3, failed: 2 },
      result: null,
      failures: [
        { replyId: '1', error: 'timeout at respondent' },
        { replyId: '2', error: 'refused' },
      ],
    });
    expect(run.outputs('late').map((o) => o.replyId)).toEqual(['3']);
  });

  it('a request’s own count, within the definition’s bounds, completes its aggregate', async () => {
    // Prepare
    const run = simulate(sized);
    await run.request({ aggregateId: 'z-2', parameters: { count: 2 } });
    await run.request({ aggregateId: 'z-3' });

    // Act
    for (const aggregateId of ['z-2', 'z-3']) {
      await run.reply({ aggregateId, replyId: 'a' }, { n: 1 });
      await run.reply({ aggregateId, replyId: 'b' }, { n: 2 });
    }

    // Assess: z-2 by its own count; z-3 still open, at the definition's count of 3
    expect(oneResult(run, 'z-2').output).toMatchObject({ completedBy: 'count', counts: { received: 2 } });
    noResult(run, 'z-3');
    await run.reply({ aggregateId: 'z-3', replyId: 'c' }, { n: 3 });
    expect(oneResult(run, 'z-3').output).toMatchObject({ completedBy: 'count', counts: { received: 3 } });
  });

  it('a request’s own deadline, within the bounds, times its aggregate out then', async () => {
    // Prepare
    const run = simulate(sized);
    await run.request({ aggregateId: 'z-soon', parameters: { timeoutSeconds: 10 } });

    // Act
    await run.advance('9999ms');
    const before = run.result();
    await run.advance('1ms');

    // Assess
    expect(before).toBeUndefined();
    expect(oneResult(run, 'z-soon').output).toMatchObject({
      outcome: 'timed-out',
      completedBy: 'deadline',
      closedAt: run.now(),
    });
  });

  it.each([
    [
      'a count outside the bounds',
      { count: 9 },
      'parameters.count is 9, outside the bounds definition "sized" sets (1 to 5)',
    ],
    [
      'a deadline outside the bounds',
      { timeoutSeconds: 5 },
      'parameters.timeoutSeconds is 5, outside the bounds',
    ],
    [
      'a parameter the definition does not allow',
      { threshold: 2 },
      'does not let a request set parameters.threshold',
    ],
    [
      'a parameter no request can set',
      { writeShards: 4 },
      'parameters.writeShards is not a parameter a request can set',
    ],
    ['a count that is not an integer', { count: 2.5 }, 'parameters.count must be an integer'],
  ])(
    'a request with %s goes to the error output with the reason and opens nothing',
    async (_what, parameters, reason) => {
      // Prepare
      const run = simulate(sized);
      const aggregateId = 'z-bad';

      // Act
      await run.request({ aggregateId, parameters });
      await run.reply({ aggregateId, replyId: 'a' }, { n: 1 });

      // Assess: the refusal names the request; a reply to it finds no aggregate
      expect(run.outputs('error')).toMatchObject([
        { type: 'fanin.error', source: 'ingress', reason: expect.stringContaining(reason) },
      ]);
      expect(JSON.stringify(run.outputs('error')[0])).toContain(aggregateId);
      expect(run.outputs('unknown')).toMatchObject([
        { aggregateId, replyId: 'a', reason: 'no such aggregate' },
      ]);
    },
  );
});
