import { type Command, table } from '../io.ts';
import * as specs from '../specs.ts';

/** `fanin endpoints`: where everything is. */
export const endpoints: Command = {
  ...specs.endpoints,
  async run(io) {
    const target = await io.target();
    if (io.wantsJson) {
      io.json(
        target.state ?? {
          kind: 'stack',
          prefix: target.prefix,
          tableName: target.tableName,
          bucketName: target.bucketName ?? null,
          queues: target.queues,
          replyPartitions: target.replyPartitions,
          partitioning: target.partitioning,
        },
      );
      return 0;
    }
    const rows: string[][] = [
      [
        'target',
        target.kind === 'local' ? `local runtime (pid ${target.state?.pid})` : `stack "${target.prefix}"`,
      ],
    ];
    if (target.state) {
      for (const [name, url] of Object.entries(target.state.endpoints)) rows.push([name, url]);
      rows.push(['dashboard', target.state.dashboardUrl ?? '(off)']);
    }
    rows.push(['table', target.tableName], ['bucket', target.bucketName ?? '-']);
    for (const [role, ref] of Object.entries(target.queues)) if (ref.url) rows.push([role, ref.url]);
    for (const ref of target.replyPartitions) rows.push([ref.name, ref.url]);
    for (const ref of target.responderQueues) rows.push([ref.name, ref.url]);
    for (const line of table(rows)) io.out(line);
    return 0;
  },
};
