import { run } from './program.ts';

/**
 * The `fanin` CLI's entry point (bin/fanin.js runs it from the clone; a bundle can start from it
 * too). The program itself is in program.ts; exit codes: 0 done, 1 failed, 2 wrong command line.
 */

// `fanin ... | head`: the reader has gone, so stop quietly instead of with an EPIPE stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

process.exitCode = await run(process.argv.slice(2));
