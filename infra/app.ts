import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { appStackOf } from './app-context.ts';
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
 * The values are checked in app-context.ts. cdk-nag's AwsSolutions pack runs as a validation
 * plugin: an unacknowledged finding fails synth.
 */
const app = new App();
const stack = appStackOf({
  stack: app.node.tryGetContext('fanin:stack'),
  prefix: app.node.tryGetContext('fanin:prefix'),
  destroy: app.node.tryGetContext('fanin:destroy'),
  architecture: app.node.tryGetContext('fanin:architecture'),
});
new FaninStack(app, stack.name, {
  description: 'fanin: serverless aggregation (Aggregator / Scatter-Gather) on SQS, DynamoDB and Lambda',
  ...stack.props,
  // Account and region come from the CLI's credentials at deploy; synth needs neither.
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
