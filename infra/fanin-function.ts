import * as path from 'node:path';
import { type Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

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
  /** Which handler: the entry is `<projectRoot>/functions/<handler>.ts`. */
  readonly handler: HandlerName;
  /** The directory holding `functions/` and `package-lock.json`. */
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
   * JSON text of the aggregation definitions, compiled into the bundle as
   * `process.env.FANIN_DEFINITIONS` (Lambda's environment is limited to 4 KB in total).
   */
  readonly definitionsJson: string;
  /** Retries of an asynchronous invocation (EventBridge schedule). @default 2 (Lambda's default) */
  readonly retryAttempts?: number;
  /** @default - none */
  readonly description?: string;
}

/**
 * A fanin handler with the project's defaults: arm64, the newest Node.js runtime, ESM bundled by the
 * local esbuild (never Docker), minified with source maps, the AWS SDK bundled at the version the
 * project pins, its own log group with a retention, and its own role that starts with nothing but
 * writing to that log group (no AWS managed policy); every other permission is a grant.
 *
 * The definitions are set on `process.env` by the first statement of the bundle (an esbuild banner)
 * rather than by esbuild `define`: `define` only rewrites the literal expression
 * `process.env.FANIN_DEFINITIONS`, and `loadConfig` reads the environment by a computed key.
 */
export class FaninFunction extends nodejs.NodejsFunction {
  public constructor(scope: Construct, id: string, props: FaninFunctionProps) {
    const role = new iam.Role(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `fanin ${props.handler} handler`,
    });
    const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    super(scope, id, {
      entry: path.join(props.projectRoot, 'functions', `${props.handler}.ts`),
      handler: 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: path.join(props.projectRoot, 'package-lock.json'),
      runtime: FANIN_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      timeout: props.timeout,
      memorySize: props.memorySize,
      role,
      logGroup,
      ...(props.retryAttempts !== undefined ? { retryAttempts: props.retryAttempts } : {}),
      ...(props.description !== undefined ? { description: props.description } : {}),
      environment: { ...props.environment, ...FUNCTION_ENVIRONMENT },
      bundling: {
        forceDockerBundling: false,
        format: nodejs.OutputFormat.ESM,
        // ESM builds first (tree shaking of the SDK); CommonJS as the fallback.
        mainFields: ['module', 'main'],
        minify: true,
        sourceMap: true,
        bundleAwsSDK: true,
        externalModules: [],
        banner: bundleBanner(props.definitionsJson),
      },
    });
    logGroup.grantWrite(role);
  }
}

/**
 * The first statements of every bundle: a `require` for bundled CommonJS code that requires Node
 * built-ins (not available in an ES module otherwise), then the definitions.
 */
export function bundleBanner(definitionsJson: string): string {
  return [
    "import { createRequire as __faninCreateRequire } from 'node:module';",
    'const require = __faninCreateRequire(import.meta.url);',
    `process.env.FANIN_DEFINITIONS = ${JSON.stringify(definitionsJson)};`,
  ].join(' ');
}
