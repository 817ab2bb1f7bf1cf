import { describe, expect, it } from 'vitest';
import { compileExpression } from '../../../../shared/engine/expression.ts';
import { ExpressionError } from '../../../../shared/errors.ts';
import { rejectionOf, thrownBy } from './factories.ts';

describe('compileExpression', () => {
  it('evaluates over the input and the bindings', async () => {
    // Prepare
    const expression = compileExpression('$min(replies.rate) * $factor');

    // Act
    const result = await expression.evaluate({ replies: [{ rate: 3.1 }, { rate: 2.9 }] }, { factor: 10 });

    // Assess
    expect(result).toBe(29);
  });

  it.each([
    ['an unclosed parenthesis', '($sum(replies'],
    ['a dangling operator', 'replies.rate +'],
    ['an unknown token', 'replies ยง rate'],
  ])('rejects %s with an ExpressionError when compiling', (_case, source) => {
    // Prepare
    // (source from the table)

    // Act
    const error = thrownBy(() => compileExpression(source));

    // Assess
    expect(error).toBeInstanceOf(ExpressionError);
    expect((error as ExpressionError).expression).toBe(source);
    expect((error as Error).message).toContain(JSON.stringify(source));
  });

  it('caches: the same source compiles to the same object', () => {
    // Prepare
    const source = '$count(replies)';

    // Act
    const a = compileExpression(source);
    const b = compileExpression(source);

    // Assess
    expect(b).toBe(a);
    expect(a.source).toBe(source);
  });

  it('caches per budget: other limits compile to another object', () => {
    // Prepare
    const source = '$count(replies) + 1';

    // Act
    const a = compileExpression(source);
    const b = compileExpression(source, { timeoutMs: 1000, maxDepth: 50 });

    // Assess
    expect(b).not.toBe(a);
  });

  it('returns plain JSON: a sequence comes back as a plain array without JSONata flags', async () => {
    // Prepare
    const expression = compileExpression('replies.rate');

    // Act
    const result = await expression.evaluate({ replies: [{ rate: 3.1 }, { rate: 2.9 }] });

    // Assess
    expect(Array.isArray(result)).toBe(true);
    expect(Object.keys(result as object)).toEqual(['0', '1']);
    expect(result).toStrictEqual([3.1, 2.9]);
  });

  it('returns plain JSON: nested sequences inside an object are plain arrays', async () => {
    // Prepare
    const expression = compileExpression('{ "rates": replies.rate, "banks": replies.bank }');

    // Act
    const result = (await expression.evaluate({
      replies: [
        { rate: 3.1, bank: 'A' },
        { rate: 2.9, bank: 'B' },
      ],
    })) as { rates: unknown[]; banks: unknown[] };

    // Assess
    expect(Object.keys(result.rates)).toEqual(['0', '1']);
    expect(Object.keys(result.banks)).toEqual(['0', '1']);
    expect(result).toStrictEqual({ rates: [3.1, 2.9], banks: ['A', 'B'] });
  });

  it('returns undefined when the expression matches nothing', async () => {
    // Prepare
    const expression = compileExpression('replies.missing');

    // Act
    const result = await expression.evaluate({ replies: [{ rate: 1 }] });

    // Assess
    expect(result).toBeUndefined();
  });

  it('does not let one evaluation change the input of the next', async () => {
    // Prepare
    const expression = compileExpression('$append(items, 4)');
    const input = { items: [1, 2, 3] };

    // Act
    const first = await expression.evaluate(input);
    const second = await expression.evaluate(input);

    // Assess
    expect(first).toStrictEqual([1, 2, 3, 4]);
    expect(second).toStrictEqual([1, 2, 3, 4]);
    expect(input).toStrictEqual({ items: [1, 2, 3] });
  });

  it('turns an evaluation error into an ExpressionError carrying the JSONata error', async () => {
    // Prepare
    const expression = compileExpression('$error("no quotes")');

    // Act
    const error = await rejectionOf(expression.evaluate({}));

    // Assess
    expect(error).toBeInstanceOf(ExpressionError);
    expect((error as Error).message).toContain('no quotes');
    expect((error as Error).cause).toMatchObject({ code: 'D3137' });
  });

  it('turns a type error into an ExpressionError', async () => {
    // Prepare
    const expression = compileExpression('replies + 1');

    // Act
    const error = await rejectionOf(expression.evaluate({ replies: 'many' }));

    // Assess
    expect(error).toBeInstanceOf(ExpressionError);
  });

  it('stops a runaway tail-recursive expression at its time budget', async () => {
    // Prepare
    const expression = compileExpression('($f := function($x){ $f($x+1) }; $f(0))', {
      timeoutMs: 20,
      maxDepth: 200,
    });

    // Act
    const error = await rejectionOf(expression.evaluate({}));

    // Assess
    expect(error).toBeInstanceOf(ExpressionError);
    expect((error as Error).message).toContain('exceeded its time budget');
  });

  it('stops a runaway deep recursion at its depth budget', async () => {
    // Prepare
    const expression = compileExpression('($f := function($x){ 1 + $f($x+1) }; $f(0))', {
      timeoutMs: 60_000,
      maxDepth: 30,
    });

    // Act
    const error = await rejectionOf(expression.evaluate({}));

    // Assess
    expect(error).toBeInstanceOf(ExpressionError);
    expect((error as Error).message).toContain('exceeded its depth budget');
  });

  it('applies the depth budget it is given: a 20-deep recursion fits 1000 but not 30', async () => {
    // Prepare
    const source = '($f := function($x){ $x <= 0 ? 0 : 1 + $f($x - 1) }; $f(20))';
    const roomy = compileExpression(source, { timeoutMs: 60_000, maxDepth: 1000 });
    const tight = compileExpression(source, { timeoutMs: 60_000, maxDepth: 30 });

    // Act
    const result = await roomy.evaluate({});
    const error = await rejectionOf(tight.evaluate({}));

    // Assess
    expect(result).toBe(20);
    expect(error).toBeInstanceOf(ExpressionError);
    expect((error as Error).message).toContain('exceeded its depth budget');
  });

  it('stops a runaway expression under the default budget', async () => {
    // Prepare
    const expression = compileExpression('($f := function($x){ 1 + $f($x+1) }; $f(0))');

    // Act
    const error = await rejectionOf(expression.evaluate({}));

    // Assess
    expect(error).toBeInstanceOf(ExpressionError);
    expect((error as Error).message).toMatch(/depth|time/);
  });

  it('evaluates a bounded recursion within its budget', async () => {
    // Prepare
    const expression = compileExpression(
      '($fact := function($n){ $n <= 1 ? 1 : $n * $fact($n - 1) }; $fact(10))',
    );

    // Act
    const result = await expression.evaluate({});

    // Assess
    expect(result).toBe(3628800);
  });
});
