import { type Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { handlerCode } from './handler-code.ts';

/** fanin's handlers; each is `functions/<name>.ts` exporting `handler`. */
export const HandlerName = {
  FAN_OUT: 'fanout',
  REPLY: 'reply',
  TIMER: 'timer',
  SWEEPER: 'sweeper',
  CONTROL: 'control',
  /** The watermark distributor of the reply partitions (scheduled, no event source). */
  DISTRIBUTOR: 'distributor',
} as const;
export type HandlerName = (typeof HandlerName)[keyof typeof HandlerName];

/** The Lambda runtime of every handler: the newest Node.js that CDK and cdk-nag (AwsSolutions-L1) know. */
export const FANIN_RUNTIME = lambda.Runtime.NODEJS_24_X;

/**
 * Variables every handler gets on top of the runtime configuration: source maps make a stack trace
 * in the logs point at `shared/…` rather than at the minified bundle. Exported so the 4 KB
 * environment check counts them.
 */
export const FUNCTION_ENVIRONMENT: Readonly<Record<string, string>> = {
  NODE_OPTIONS: '--enable-source-maps',
};

/** Properties of a {@link FaninFunction}. */
export interface FaninFunctionProps {
  /**
   * Which handler: its code is `<projectRoot>/dist/handlers/<handler>/handler.mjs` (pre-bundled by
   * `npm run build`, as in the `@fanin/cdk` package) when it exists, else
   * `<projectRoot>/functions/<handler>.ts` bundled at synth (this repository).
   */
  readonly handler: HandlerName;
  /** The directory holding `dist/handlers/` (the package) or `functions/` (the repository). */
  readonly projectRoot: string;
  /** Invocation timeout. */
  readonly timeout: Duration;
  /** Memory in MiB. */
  readonly memorySize: number;
  /** Retention of the function's log group. */
  readonly logRetention: logs.RetentionDays;
  /** What happens to the log group when it leaves the stack. */
  readonly logRemovalPolicy?: RemovalPolicy;
  /** Environment variables (the runtime configuration contract, see shared/config.ts). */
  readonly environment: Readonly<Record<string, string>>;
  /**
   * JSON text of the aggregation definitions, a module of the code asset (`definitions.mjs`) that
   * sets `process.env.FANIN_DEFINITIONS` (Lambda's environment is limited to 4 KB in total).
   */
  readonly definitionsJson: string;
  /** Retries of an asynchronous invocation (EventBridge schedule). @default 2 (Lambda's default) */
  readonly retryAttempts?: number;
  /** @default - none */
  readonly description?: string;
  /** The instruction set the handler runs on. @default lambda.Architecture.ARM_64 */
  readonly architecture?: lambda.Architecture;
  /** Concurrency reserved for (and limiting) the function. @default - none: the account's unreserved pool */
  readonly reservedConcurrentExecutions?: number;
  /** Lambda active tracing (X-Ray): CDK adds the X-Ray write permissions to the role. @default false */
  readonly tracing?: boolean;
  /** A customer managed KMS key for the log group. @default - CloudWatch Logs' own encryption */
  readonly logEncryptionKey?: kms.IKey;
}

/**
 * A fanin handler with the project's defaults: arm64 (or x86_64), the newest Node.js runtime, ESM bundled by
 * esbuild (at build time for the package, by the local esbuild at synth in this repository; never
 * Docker), minified with source maps, the AWS SDK bundled at the version the project pins, its own
 * log group with a retention, and its own role that starts with nothing but writing to that log
 * group (no AWS managed policy); every other permission is a grant.
 *
 * The definitions travel in the code, not the 4 KB environment: the asset's `index.mjs` imports a
 * `definitions.mjs` that sets `process.env.FANIN_DEFINITIONS` before the handler's bundle loads
 * (see infra/handler-code.ts).
 */
export class FaninFunction extends lambda.Function {
  /**
   * The function's own role (never shared): its `roleId` is the `SenderId` SQS gives the messages
   * the function sends (`<role id>:<session>`).
   */
  public readonly executionRole: iam.Role;

  public constructor(scope: Construct, id: string, props: FaninFunctionProps) {
    const role = new iam.Role(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `fanin ${props.handler} handler`,
    });
    const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
      ...(props.logEncryptionKey ? { encryptionKey: props.logEncryptionKey } : {}),
    });
    super(scope, id, {
      code: handlerCode(props.projectRoot, props.handler, props.definitionsJson),
      handler: 'index.handler',
      runtime: FANIN_RUNTIME,
      architecture: props.architecture ?? lambda.Architecture.ARM_64,
      ...(props.reservedConcurrentExecutions !== undefined
        ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions }
        : {}),
      ...(props.tracing ? { tracing: lambda.Tracing.ACTIVE } : {}),
      timeout: props.timeout,
      memorySize: props.memorySize,
      role,
      logGroup,
      ...(props.retryAttempts !== undefined ? { retryAttempts: props.retryAttempts } : {}),
      ...(props.description !== undefined ? { description: props.description } : {}),
      environment: { ...props.environment, ...FUNCTION_ENVIRONMENT },
    });
    this.executionRole = role;
    logGroup.grantWrite(role);
  }
}
