import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { FaninStackProps } from './fanin-stack.ts';

/** The CDK app's context values (`-c key=value`), as the CLI hands them over: untyped. */
export interface AppContext {
  readonly stack?: unknown;
  readonly prefix?: unknown;
  readonly destroy?: unknown;
  readonly architecture?: unknown;
}

/** What the app builds from its context: the stack's name and its props beyond the environment. */
export interface AppStack {
  readonly name: string;
  readonly props: Pick<FaninStackProps, 'prefix' | 'destroyOnRemoval' | 'fanin'>;
}

const STACK_NAME = /^[A-Za-z][A-Za-z0-9-]{0,127}$/;

/**
 * The stack the app synthesizes, from `-c fanin:stack`, `fanin:prefix`, `fanin:destroy` and
 * `fanin:architecture` (infra/app.ts documents them). A value CloudFormation or Lambda would
 * refuse is refused here, at synth, with the option's name and the value given.
 */
export function appStackOf(context: AppContext): AppStack {
  const { stack, prefix, destroy, architecture } = context;
  if (architecture !== undefined && architecture !== 'arm64' && architecture !== 'x86_64') {
    throw new Error(`-c fanin:architecture must be arm64 or x86_64 (given ${JSON.stringify(architecture)})`);
  }
  if (stack !== undefined && (typeof stack !== 'string' || !STACK_NAME.test(stack))) {
    throw new Error(
      `-c fanin:stack must be a CloudFormation stack name: a letter, then letters, digits or dashes (given ${JSON.stringify(stack)})`,
    );
  }
  return {
    name: typeof stack === 'string' ? stack : 'Fanin',
    props: {
      ...(typeof prefix === 'string' ? { prefix } : {}),
      destroyOnRemoval: destroy === true || destroy === 'true',
      ...(architecture === 'x86_64' ? { fanin: { architecture: lambda.Architecture.X86_64 } } : {}),
    },
  };
}
