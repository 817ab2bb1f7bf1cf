import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { TestContext } from 'vitest';

/**
 * Optional tools of the test suite (a browser, moto_server): a test that needs one that is missing
 * is reported skipped with the reason and how to get it, never passed. `FANIN_REQUIRE_TOOLS=1`
 * (what `.ci/run` sets) turns every such skip into a failure, so CI cannot lose a test silently.
 */

/** Whether a missing optional tool fails the test instead of skipping it. */
export function toolsRequired(): boolean {
  return process.env.FANIN_REQUIRE_TOOLS === '1';
}

/**
 * Guard for a test that needs `tool`: true when it is there (`missing` is undefined); otherwise
 * the test is skipped with `missing` as the reason, or fails with `FANIN_REQUIRE_TOOLS=1`.
 *
 * @example
 * it('draws the page', async (context) => {
 *   if (!requireTool(context, 'browser', browser.missing)) return;
 *   // ...
 * });
 */
export function requireTool(context: TestContext, tool: string, missing: string | undefined): boolean {
  if (missing === undefined) return true;
  if (toolsRequired()) throw new Error(`${tool} is required here (FANIN_REQUIRE_TOOLS=1): ${missing}`);
  context.skip(`${tool}: ${missing}`);
  return false;
}

/** A tool found (its path) or why not. */
export type Found =
  | { readonly path: string; readonly missing?: undefined }
  | { readonly path?: undefined; readonly missing: string };

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first of `names` on the PATH (with Windows' extensions where they apply). */
export function onPath(names: readonly string[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  const extensions = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  for (const name of names) {
    for (const dir of dirs) {
      for (const extension of extensions) {
        const candidate = join(dir, `${name}${extension}`);
        if (isExecutable(candidate)) return candidate;
      }
    }
  }
  return undefined;
}

/** Browsers playwright-core can drive over CDP, by the names their packages install. */
const BROWSER_COMMANDS = [
  'chromium',
  'chromium-browser',
  'google-chrome',
  'google-chrome-stable',
  'chrome',
  'microsoft-edge',
  'microsoft-edge-stable',
  'msedge',
];

/** Where the usual installers put them when they are not on the PATH (macOS, Windows, snap). */
const BROWSER_PATHS = [
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
  '/snap/bin/chromium',
  ...['ProgramFiles', 'ProgramFiles(x86)', 'LOCALAPPDATA'].flatMap((variable) => {
    const base = process.env[variable];
    return base
      ? [
          join(base, 'Google', 'Chrome', 'Application', 'chrome.exe'),
          join(base, 'Microsoft', 'Edge', 'Application', 'msedge.exe'),
          join(base, 'Chromium', 'Application', 'chrome.exe'),
        ]
      : [];
  }),
];

/**
 * An installed Chrome, Chromium or Edge for the dashboard's browser test: `FANIN_BROWSER` when set,
 * else the first on the PATH, else the usual install locations, else a browser downloaded by
 * `npx playwright-core install chromium`.
 */
export async function findBrowser(env: NodeJS.ProcessEnv = process.env): Promise<Found> {
  const chosen = env.FANIN_BROWSER;
  if (chosen) {
    return isExecutable(chosen)
      ? { path: chosen }
      : { missing: `FANIN_BROWSER=${chosen} is not an executable file` };
  }
  const found = onPath(BROWSER_COMMANDS, env) ?? BROWSER_PATHS.find(isExecutable);
  if (found) return { path: found };
  const { chromium } = await import('playwright-core');
  const downloaded = (() => {
    try {
      return chromium.executablePath();
    } catch {
      return undefined;
    }
  })();
  if (downloaded && isExecutable(downloaded)) return { path: downloaded };
  return {
    missing:
      'no Chrome, Chromium or Edge found (looked for FANIN_BROWSER, ' +
      `${BROWSER_COMMANDS.join(', ')} on the PATH and the usual install folders): install one ` +
      '(Debian/Ubuntu: apt-get install chromium) or set FANIN_BROWSER to its executable',
  };
}
