import * as lambda from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { appStackOf } from '../../../infra/app-context.ts';

/** The CDK app's `-c` values (docs/configuration.md, docs/localstack.md): what each builds, what is refused at synth. */
describe('the CDK app context', () => {
  it('without context builds the stack Fanin, kept on destroy, on the construct defaults', () => {
    expect(appStackOf({})).toEqual({ name: 'Fanin', props: { destroyOnRemoval: false } });
  });

  it('names a second stack, gives its prefix and deletes its data on destroy when asked (true as a string, as -c gives it)', () => {
    // Act
    const dev = appStackOf({ stack: 'FaninDev', prefix: 'fanin-dev', destroy: 'true' });

    // Assess
    expect(dev).toEqual({ name: 'FaninDev', props: { prefix: 'fanin-dev', destroyOnRemoval: true } });
    expect(appStackOf({ destroy: true }).props.destroyOnRemoval).toBe(true);
    expect(appStackOf({ destroy: 'yes' }).props.destroyOnRemoval).toBe(false);
  });

  it('runs the handlers on x86_64 only when asked; arm64 is the default', () => {
    expect(appStackOf({ architecture: 'x86_64' }).props.fanin?.architecture).toBe(lambda.Architecture.X86_64);
    expect(appStackOf({ architecture: 'arm64' }).props.fanin).toBeUndefined();
  });

  it('refuses an architecture Lambda has not, naming the option and the value', () => {
    expect(() => appStackOf({ architecture: 'arm' })).toThrow(
      '-c fanin:architecture must be arm64 or x86_64 (given "arm")',
    );
  });

  it.each<[unknown, string]>([
    ['1fanin', 'a digit first'],
    ['fanin_dev', 'an underscore'],
    ['a'.repeat(129), '129 characters'],
    [42, 'not a string'],
  ])('refuses a stack name CloudFormation would refuse: %s (%s)', (stack) => {
    expect(() => appStackOf({ stack })).toThrow(/^-c fanin:stack must be a CloudFormation stack name/);
  });

  it('takes the longest stack name CloudFormation allows (128 characters)', () => {
    expect(appStackOf({ stack: `F${'a'.repeat(127)}` }).name).toHaveLength(128);
  });
});
