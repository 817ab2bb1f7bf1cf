import { describe, expect, it } from 'vitest';
import { getParameters, setParameters } from '../../../../shared/adapters/state-parameters.ts';
import { world } from './support.ts';

/** A definition's runtime parameters: one item under `D#<definition>`, none until set. The module's own test. */
describe('runtime parameters', () => {
  it('are empty until set, then read back as set, under the definition’s own key', async () => {
    // Prepare
    const w = world();
    const before = await getParameters(w.table, 'orders');

    // Act
    await setParameters(w.table, 'orders', { timeoutSeconds: 30 });
    await setParameters(w.table, 'orders', { timeoutSeconds: 45 });

    // Assess
    expect(before).toEqual({});
    expect(await getParameters(w.table, 'orders')).toEqual({ timeoutSeconds: 45 });
    expect(await getParameters(w.table, 'quotes')).toEqual({});
    expect(w.items()).toEqual([{ pk: 'D#orders', sk: 'P', parameters: { timeoutSeconds: 45 } }]);
  });
});
