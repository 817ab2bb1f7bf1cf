import { describe, expect, it } from 'vitest';
import { layoutFindings, mirroredTest } from '../../../scripts/test-layout.ts';

describe('the unit tests mirror the source', () => {
  it('puts the unit test of a module at test/unit/<same path>.test.ts', () => {
    expect(mirroredTest('shared/engine/completion/plan.ts')).toBe(
      'test/unit/shared/engine/completion/plan.test.ts',
    );
    expect(mirroredTest('local/cli/commands/history.ts')).toBe(
      'test/unit/local/cli/commands/history.test.ts',
    );
  });

  it('finds a module with neither its mirrored test nor a reason to need none', () => {
    // Arrange
    const tests = new Set(['test/unit/shared/a.test.ts']);

    // Act
    const findings = layoutFindings(['shared/a.ts', 'shared/b.ts', 'shared/types.ts'], (p) => tests.has(p), {
      'shared/types.ts': 'types only',
    });

    // Assess
    expect(findings).toEqual({ untested: ['shared/b.ts'], listedButGone: [], listedButTested: [] });
  });

  it('refuses an exemption that names no module, or a module that has a test after all', () => {
    // Arrange
    const tests = new Set(['test/unit/shared/a.test.ts']);

    // Act
    const findings = layoutFindings(['shared/a.ts'], (p) => tests.has(p), {
      'shared/a.ts': 'said to have no logic',
      'shared/moved.ts': 'a module since renamed',
    });

    // Assess
    expect(findings.listedButTested).toEqual(['shared/a.ts']);
    expect(findings.listedButGone).toEqual(['shared/moved.ts']);
    expect(findings.untested).toEqual([]);
  });
});
