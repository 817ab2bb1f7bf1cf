/** A progress line on stderr (stdout carries only the summary line). */
export function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}
