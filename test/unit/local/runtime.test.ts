import { describe, expect, it } from 'vitest';
import { handlerEnvironment } from '../../../infra/handler-environment.ts';
import { runtimeConfigOf } from '../../../local/runtime.ts';
import { createContext } from '../../../shared/app.ts';
import { createClients } from '../../../shared/aws/clients.ts';
import { ConfigEnv } from '../../../shared/config.ts';
import { completionLeaseSeconds, describeTopology } from '../../../shared/topology/topology.ts';

/**
 * The local runtime's completion lease is the one a deployed stack's handlers get: derived from
 * `functionTimeoutSeconds` by the topology (on AWS, `FANIN_LEASE_SECONDS`), never the 30 s
 * function timeout's default, so a local handler's lease cannot run out while its invocation may
 * still run (and its queues' visibility timeouts, derived from the same two, stay past it).
 */
describe('the local runtime completion lease', () => {
  it.each([30, 60, 300, 900])(
    'is derived from a function timeout of %d s as on AWS',
    (functionTimeoutSeconds) => {
      // Prepare
      const topology = describeTopology({
        prefix: 'lease',
        functionTimeoutSeconds,
        definitions: [{ name: 'd', completion: { strategy: 'all' }, timeoutSeconds: 60 }],
      });
      const provisioned = {
        tableName: topology.tableName,
        queueUrls: Object.fromEntries(
          Object.entries(topology.queues).map(([role, q]) => [
            role,
            `http://127.0.0.1:1/000000000000/${q.name}`,
          ]),
        ) as Parameters<typeof runtimeConfigOf>[1]['queueUrls'],
        replyQueueUrls: topology.replyPartitions.map((q) => `http://127.0.0.1:1/000000000000/${q.name}`),
      };

      // Act
      const config = runtimeConfigOf(topology, provisioned, {});
      const ctx = createContext(config, createClients());

      // Assess (mutant killed: the local runtime's config without the topology's lease)
      const onAws = handlerEnvironment({
        ...provisioned,
        bucketName: 'b',
        partitioning: topology.partitioning,
        completionLeaseSeconds: topology.completionLeaseSeconds,
        serviceName: 'lease',
      });
      expect(ctx.completionLeaseMs).toBe(completionLeaseSeconds(functionTimeoutSeconds) * 1000);
      expect(ctx.completionLeaseMs).toBe(Number(onAws[ConfigEnv.LEASE_SECONDS]) * 1000);
    },
  );
});
