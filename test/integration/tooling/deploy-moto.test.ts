import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { onPath, requireTool } from '../../support/tools.ts';

/**
 * The deploy smoke test: `cdk bootstrap` and `cdk deploy` of the example stack (infra/app.ts)
 * against a second implementation of the AWS APIs that needs no Docker, moto's server, then
 * `fanin partitions --stack` against what was deployed. It shows that the synthesized template and
 * assets go through the CDK CLI's real deployment path (asset publishing to S3 path-style,
 * CloudFormation change sets), that a second example stack (`-c fanin:stack=FaninSmoke`) deploys
 * beside the default one in one account and region with names of its own and outputs naming them,
 * and that the CLI finds a deployed stack by its name (its prefix).
 *
 * moto accepts the resources without running them (no Lambda invocation, no alarm evaluation): it
 * checks the deployment, not the runtime, which the other integration tests cover on emulators.
 * Without moto_server on the PATH the test is reported skipped with the reason
 * (`FANIN_REQUIRE_TOOLS=1`, as in CI, makes that a failure).
 */

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const CDK = join(ROOT, 'node_modules', '.bin', 'cdk');
const ACCOUNT = '123456789012'; // moto's default account
const REGION = 'us-east-1';
/** The stack's name: the example app names its prefix after it, in lower case. */
const STACK = 'FaninSmoke';
const PREFIX = 'faninsmoke';
const run = promisify(execFile);

/** A free TCP port on the loopback interface. */
async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? done(address.port) : fail(new Error('no port')),
      );
    });
  });
}

/** Starts moto_server on a free port and waits until it answers. */
async function startMoto(path: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(path, ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const url = `http://localhost:${port}`;
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}`);
    try {
      const response = await fetch(`${url}/moto-api/`);
      await response.body?.cancel();
      if (response.ok) return { child, url };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error('moto_server did not answer within 30 s');
}

/**
 * The CLI's environment: the SDK's standard settings pointed at moto, nothing else. The test
 * workers' per-service endpoints (the other emulators) are removed: they would take precedence.
 */
function deployEnvironment(endpoint: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_') && !name.startsWith('CDK_')),
  );
  return {
    ...env,
    AWS_ENDPOINT_URL: endpoint,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_REGION: REGION,
    AWS_DEFAULT_REGION: REGION,
    CDK_DEFAULT_ACCOUNT: ACCOUNT,
    CDK_DEFAULT_REGION: REGION,
    // The CDK CLI publishes assets to the bootstrap bucket; moto's S3 answers path-style URLs.
    CDK_S3_FORCE_PATH_STYLE: '1',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}

/** DescribeStacks of a CloudFormation stack, from the query API (moto does not check signatures). */
async function describeStack(endpoint: string, stackName: string): Promise<string> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `AWS4-HMAC-SHA256 Credential=test/20200101/${REGION}/cloudformation/aws4_request, SignedHeaders=host, Signature=0`,
    },
    body: new URLSearchParams({ Action: 'DescribeStacks', Version: '2010-05-15', StackName: stackName }),
  });
  return response.text();
}

/** The status of a CloudFormation stack. */
async function stackStatus(endpoint: string, stackName: string): Promise<string | undefined> {
  return /<StackStatus>([A-Z_]+)<\/StackStatus>/.exec(await describeStack(endpoint, stackName))?.[1];
}

/** The outputs of a CloudFormation stack, by key. */
async function stackOutputs(endpoint: string, stackName: string): Promise<Record<string, string>> {
  const xml = await describeStack(endpoint, stackName);
  const outputs: Record<string, string> = {};
  // Each output is a <member> of <Outputs> holding its key and value (and a description).
  for (const member of xml.split('<member>')) {
    const key = /<OutputKey>([^<]*)<\/OutputKey>/.exec(member)?.[1];
    const value = /<OutputValue>([^<]*)<\/OutputValue>/.exec(member)?.[1];
    if (key !== undefined && value !== undefined) outputs[key] = value;
  }
  return outputs;
}

interface PartitionsJson {
  readonly backlog: { readonly name: string; readonly depth: number };
  readonly partitions: readonly {
    readonly name: string;
    readonly enabled: boolean;
    readonly depth: number;
  }[];
}

describe('deploy smoke test on moto (no Docker)', () => {
  let moto: ChildProcess | undefined;
  let scratch: string | undefined;

  afterAll(async () => {
    moto?.kill();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('bootstraps, deploys the example stack and a second one beside it to CREATE_COMPLETE, the second with its outputs, and fanin partitions --stack finds it', {
    timeout: 900_000,
  }, async (context) => {
    const motoPath = onPath(['moto_server']);
    const missing = motoPath
      ? undefined
      : 'moto_server is not on the PATH (pip install "moto[server]==5.2.1"); .ci/run installs it';
    if (!requireTool(context, 'moto_server', missing) || !motoPath) return;

    // GIVEN moto's server on a loopback port and a scratch directory for the cloud assembly
    const started = await startMoto(motoPath);
    moto = started.child;
    scratch = await mkdtemp(join(tmpdir(), 'fanin-deploy-'));
    const env = deployEnvironment(started.url);
    const began = Date.now();

    // WHEN the environment is bootstrapped (from a directory without cdk.json: no app to synthesize)
    await run(CDK, ['bootstrap', `aws://${ACCOUNT}/${REGION}`, '--output', join(scratch, 'bootstrap.out')], {
      cwd: scratch,
      env,
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(await stackStatus(started.url, 'CDKToolkit')).toBe('CREATE_COMPLETE');

    // AND the example app's default stack Fanin is deployed through a change set, as on AWS
    // (bundles built, assets published)
    const deploy = (stack: string, ...extra: string[]) =>
      run(
        CDK,
        [
          'deploy',
          stack,
          '--require-approval',
          'never',
          '--output',
          join(scratch ?? '', `cdk.out-${stack}`),
          ...extra,
        ],
        { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 },
      );
    await deploy('Fanin');
    // AND a second example stack, FaninSmoke, beside it in the same account and region (prefix
    // faninsmoke, its name in lower case). It is created directly: moto 5.2.1 computes a stack's
    // outputs only from the template a stack is created or updated with, and a change set's stack
    // is created empty, so its outputs would be missing there (not on AWS).
    await deploy(STACK, '--context', `fanin:stack=${STACK}`, '--method', 'direct');
    // THEN both stacks are complete: no name of one collided with the other's
    expect(await stackStatus(started.url, 'Fanin')).toBe('CREATE_COMPLETE');
    expect(await stackStatus(started.url, STACK)).toBe('CREATE_COMPLETE');
    const deploySeconds = (Date.now() - began) / 1000;

    // AND its outputs name the prefix, the queues a producer and the CLI need, the table and bucket
    const outputs = await stackOutputs(started.url, STACK);
    expect(outputs.FaninPrefix, JSON.stringify(outputs)).toBe(PREFIX);
    expect(outputs.FaninIngressQueueUrl).toMatch(new RegExp(`/${ACCOUNT}/${PREFIX}-ingress$`));
    expect(outputs.FaninControlQueueUrl).toMatch(new RegExp(`/${PREFIX}-control$`));
    expect(outputs.FaninCompletedQueueUrl).toMatch(new RegExp(`/${PREFIX}-out-completed\\.fifo$`));
    expect(outputs.FaninReplyQueue0Url).toMatch(new RegExp(`/${PREFIX}-reply-0$`));
    expect(outputs.FaninReplyPartitions).toBe('2');
    expect(outputs.FaninStateTableName).toBe(`${PREFIX}-state`);
    expect(outputs.FaninPayloadBucketName).toBe(outputs.PayloadBucket);
    expect(outputs.FaninPayloadBucketName).toMatch(/^[a-z0-9.-]{3,63}$/);

    // AND the CLI finds the deployed reply partitions and backlog by the stack's name (its prefix)
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { bin: { fanin: string } };
    const { stdout } = await run(
      process.execPath,
      [join(ROOT, pkg.bin.fanin), 'partitions', '--stack', STACK, '--json'],
      { cwd: scratch, env },
    );
    const view = JSON.parse(stdout) as PartitionsJson;
    expect(view.partitions.map((p) => [p.name, p.enabled, p.depth])).toEqual([
      [`${PREFIX}-reply-0`, true, 0],
      [`${PREFIX}-reply-1`, true, 0],
    ]);
    expect(view.backlog).toEqual({ name: `${PREFIX}-backlog`, depth: 0 });
    console.info(`deploy smoke test: bootstrap and two deploys on moto took ${deploySeconds.toFixed(1)} s`);
  });
});
