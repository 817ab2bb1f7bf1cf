import { inject, type TestContext } from 'vitest';

/**
 * True when the integration global setup found an EventBridge endpoint: moto_server started
 * locally, `AWS_ENDPOINT_URL_EVENTBRIDGE`, or LocalStack through `AWS_ENDPOINT_URL`.
 */
export function eventBridgeAvailable(): boolean {
  return process.env.FANIN_TEST_EVENTBRIDGE === '1';
}

/**
 * Guard for a test that needs EventBridge. When no endpoint exists it says so loudly (a
 * warning on stderr and a test annotation, which the verbose and GitHub Actions reporters show)
 * and returns false; the test then returns early. The lint forbids skipped tests, and a test that
 * silently passes without checking anything would hide the gap.
 *
 * @example
 * test('PutEvents accepts an event', async (context) => {
 *   if (!(await requireEventBridge(context))) return;
 *   // ...
 * });
 */
export async function requireEventBridge(context: TestContext): Promise<boolean> {
  if (eventBridgeAvailable()) return true;
  const reason =
    inject('faninEventBridgeUnavailableReason') ||
    'no EventBridge endpoint (install moto_server: pip install "moto[server]", or set AWS_ENDPOINT_URL to LocalStack)';
  const message = `EventBridge tests did NOT run: "${context.task.name}": ${reason}`;
  console.warn(`\n!!! ${message}\n`);
  await context.annotate(message, 'warning');
  return false;
}
