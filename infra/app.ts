import { App, Validations } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { FaninStack } from './fanin-stack.ts';

/**
 * The CDK app: `npx cdk synth` / `npx cdk deploy`. Context (`-c key=value`):
 * - `fanin:stack`: the stack's name (default `Fanin`); a second stack in one account and region
 *   (dev and prod, two teams) is a second name: `-c fanin:stack=FaninDev`
 * - `fanin:prefix`: resource name prefix (default: the stack's name in lower case, `fanin`). Never
 *   change it on a deployed stack: its queues and table would be replaced (docs/configuration.md)
 * - `fanin:destroy=true`: delete the table, bucket and logs with the stack (demo deployments)
 * - `fanin:architecture=x86_64`: x86 handlers instead of arm64 (e.g. LocalStack on an x86 host,
 *   docs/localstack.md)
 *
 * cdk-nag's AwsSolutions pack runs as a validation plugin: an unacknowledged finding fails synth.
 */
const app = new App();
const stackName: unknown = app.node.tryGetContext('fanin:stack');
const prefix: unknown = app.node.tryGetContext('fanin:prefix');
const destroy: unknown = app.node.tryGetContext('fanin:destroy');
const architecture: unknown = app.node.tryGetContext('fanin:architecture');
if (architecture !== undefined && architecture !== 'arm64' && architecture !== 'x86_64') {
  throw new Error(`-c fanin:architecture must be arm64 or x86_64 (given ${JSON.stringify(architecture)})`);
}
if (
  stackName !== undefined &&
  (typeof stackName !== 'string' || !/^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(stackName))
) {
  throw new Error(
    `-c fanin:stack must be a CloudFormation stack name: a letter, then letters, digits or dashes (given ${JSON.stringify(stackName)})`,
  );
}
new FaninStack(app, typeof stackName === 'string' ? stackName : 'Fanin', {
  description: 'fanin: serverless aggregation (Aggregator / Scatter-Gather) on SQS, DynamoDB and Lambda',
  ...(typeof prefix === 'string' ? { prefix } : {}),
  destroyOnRemoval: destroy === true || destroy === 'true',
  ...(architecture === 'x86_64' ? { fanin: { architecture: lambda.Architecture.X86_64 } } : {}),
  // Account and region come from the CLI's credentials at deploy; synth needs neither.
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
