import { describe, expect, it } from 'vitest';
import { predicateHolds } from '../../../../shared/engine/completion/predicate-evaluation.ts';
import { compileExpression } from '../../../../shared/engine/expression.ts';
import { ExpressionError } from '../../../../shared/errors.ts';

const BUDGET = { timeoutMs: 250, maxDepth: 200 };
/**
 * A string that makes a backtracking engine try every way of splitting it: 2^26 paths, over a
 * second even once V8 has compiled the pattern to native code (after its first match), yet few
 * enough that a mutant without the bound ends, and fails, instead of hanging the run.
 */
const EVIL = `${'a'.repeat(26)}!`;

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const start = performance.now();
  try {
    const value = await run();
    return { ms: performance.now() - start, value };
  } catch (error) {
    return { ms: performance.now() - start, error };
  }
}

describe('the time budget holds inside a regular expression', () => {
  it.each([
    ['a case-insensitive ambiguous repetition', '/^(a|a)*$/i'],
    ['a backreference after a nested quantifier', '/^(a+)+\\1$/'],
    ['a lookahead before an ambiguous repetition', '/^(?=a)(a|a)*$/'],
  ])(
    'a predicate with %s over a 27-character reply string fails as over budget within twice its budget',
    async (_case, regex) => {
      // Kills the mutant "regex literals on the built-in RegExp" (no RegexEngine option).
      // Prepare: the expression loaded (as a definition is), and its worker started
      const expression = `$contains(replies[0].name, ${regex})`;
      await predicateHolds(expression, { replies: [{ name: 'aa' }] }, BUDGET).catch(() => undefined);
      const input = { replies: [{ name: EVIL }] };

      // Act
      const { ms, error } = await timed(() => predicateHolds(expression, input, BUDGET));

      // Assess
      expect(error).toBeInstanceOf(ExpressionError);
      expect((error as Error).message).toContain('exceeded its time budget');
      expect(ms).toBeLessThan(2 * BUDGET.timeoutMs + 250);
    },
  );

  it('a catastrophic pattern the linear-time engine can run answers at once, with the backtracking answer', async () => {
    // Kills the mutant "every regex in the worker" (there the match outlives the budget and fails).
    // Prepare
    const input = { replies: [{ name: EVIL }, { name: 'aaaa' }] };

    // Act
    const { ms, value } = await timed(() =>
      compileExpression('replies.($contains(name, /^(a|a)*$/))', BUDGET).evaluate(input),
    );

    // Assess
    expect(value).toEqual([false, true]);
    expect(ms).toBeLessThan(BUDGET.timeoutMs);
  });

  it('after a worker was ended at the budget, the next evaluation with a non-linear pattern answers correctly', async () => {
    // Kills the mutant "a terminated worker is reused" (every later match would hang or fail).
    // Prepare: a generous budget for the next evaluation, which may wait for the new worker to start
    const expression = compileExpression('$match(text, /(\\w+)@(\\w+)/i).groups', {
      ...BUDGET,
      timeoutMs: 5000,
    });
    await predicateHolds('$contains(s, /^(a|a)*$/i)', { s: EVIL }, BUDGET).catch(() => undefined);

    // Act
    const groups = await expression.evaluate({ text: 'to Ada@Example and bob@host' });

    // Assess
    expect(groups).toEqual(['Ada', 'Example', 'bob', 'host']);
  });

  it('a non-linear pattern matched over 1,000 replies costs well under the budget (one worker, a message per match)', async () => {
    // Prepare
    const replies = Array.from({ length: 1000 }, (_, i) => ({ name: `Bank ${i} AG` }));
    const budgetMs = 5000;
    const expression = compileExpression('$count(replies[$contains(name, /bank \\d+ ag/i)])', {
      ...BUDGET,
      timeoutMs: budgetMs,
    });
    await expression.evaluate({ replies: replies.slice(0, 1) });

    // Act
    const { ms, value } = await timed(() => expression.evaluate({ replies }));

    // Assess: every match answered within the budget, with room to spare on a loaded machine (a
    // worker per match, or a message per character, would take seconds); the per-reply figure is
    // printed, not asserted, since it depends on the machine's load
    expect(value).toBe(1000);
    console.info(`a non-linear regex in the worker: ${(ms / 1000).toFixed(3)} ms per reply`);
    expect(ms).toBeLessThan(budgetMs / 2);
  });
});
