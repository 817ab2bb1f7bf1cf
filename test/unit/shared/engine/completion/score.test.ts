import { describe, expect, it } from 'vitest';
import { scoreOf } from '../../../../../shared/engine/completion/score.ts';
import { aDefinition, aMessage, anOverrideDefinition } from '../factories.ts';

const timeout = aDefinition({ completion: { strategy: 'timeout' }, timeoutSeconds: 60 });

describe('scoreOf', () => {
  const loan = anOverrideDefinition();

  it.each([
    ['a number', { rate: 2.75 }, 2.75],
    ['zero', { rate: 0 }, 0],
    ['a negative number', { rate: -1.5 }, -1.5],
    ['a numeric string', { rate: '2.75' }, 2.75],
    ['a numeric string with spaces', { rate: ' 4 ' }, 4],
    ['a non-numeric string', { rate: 'low' }, undefined],
    ['an empty string', { rate: '' }, undefined],
    ['a blank string', { rate: '   ' }, undefined],
    ['a boolean', { rate: true }, undefined],
    ['null', { rate: null }, undefined],
    ['an object', { rate: { value: 3 } }, undefined],
    ['nothing', {}, undefined],
  ])('reads %s', async (_case, body, expected) => {
    // Prepare
    const message = aMessage(body);

    // Act
    const score = await scoreOf(loan, message);

    // Assess
    expect(score).toBe(expected);
  });

  it('reads a score from a JSONata expression', async () => {
    // Prepare
    const definition = anOverrideDefinition({
      score: { source: 'jsonata', expression: 'body.quote.rate + body.quote.fees' },
    });

    // Act
    const score = await scoreOf(definition, aMessage({ quote: { rate: 2.5, fees: 0.25 } }));

    // Assess
    expect(score).toBe(2.75);
  });

  it('reads a score from an attribute', async () => {
    // Prepare
    const definition = anOverrideDefinition({ score: { source: 'attribute', name: 'score' } });

    // Act
    const score = await scoreOf(definition, aMessage({}, { score: '3.5' }));

    // Assess
    expect(score).toBe(3.5);
  });

  it('is undefined under a definition that is not override', async () => {
    // Prepare
    const message = aMessage({ rate: 2.75 });

    // Act
    const score = await scoreOf(timeout, message);

    // Assess
    expect(score).toBeUndefined();
  });
});
