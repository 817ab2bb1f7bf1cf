import { inject, type TestContext } from 'vitest';
import { requireTool } from './tools.ts';

/**
 * True when the integration global setup found an EventBridge endpoint: moto_server started
 * locally, `AWS_ENDPOINT_URL_EVENTBRIDGE`, or LocalStack through `AWS_ENDPOINT_URL`.
 */
export function eventBridgeAvailable(): boolean {
  return process.env.FANIN_TEST_EVENTBRIDGE === '1';
}

/**
 * Guard for a test that needs EventBridge. When no endpoint exists the test is reported as
 * skipped, with the reason and how to get the tool, never as passed; with
 * `FANIN_REQUIRE_TOOLS=1` (as CI may set) it fails instead.
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
  return requireTool(context, 'EventBridge', reason);
}
