import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { AssetHashType, type ILocalBundling } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';

/**
 * Where a handler's code comes from, and how its asset is laid out.
 *
 * Every handler asset holds the same four files, whichever way it was made:
 * - `handler.mjs` (and `handler.mjs.map`): the handler bundled by esbuild with the options below,
 *   the same for every fanin and every deployment (no definitions in it);
 * - `definitions.mjs`: sets `process.env.FANIN_DEFINITIONS` to this fanin's definitions (Lambda's
 *   environment is limited to 4 KB in total, so they travel in the code);
 * - `index.mjs`: imports `definitions.mjs`, then re-exports `handler` from `handler.mjs`. An ES
 *   module's imports are evaluated in order, so the definitions are set before any bundled module
 *   reads the environment. The Lambda handler is `index.handler`.
 *
 * `handler.mjs` is either pre-bundled (`<root>/dist/handlers/<name>/handler.mjs`, written by
 * `npm run build` into the published `@fanin/cdk` package, so its users need neither esbuild nor
 * fanin's lockfile) or, in this repository, bundled at synth from `<root>/functions/<name>.ts` by
 * the local esbuild (never Docker). Both are CDK local bundling: `aws:cdk:bundling-stacks` skips
 * them the same way, and the asset hash is the output's.
 */

/** The first statement of every handler bundle: a `require` for bundled CommonJS code that requires Node built-ins. */
export const ESM_REQUIRE_BANNER = [
  "import { createRequire as __faninCreateRequire } from 'node:module';",
  'const require = __faninCreateRequire(import.meta.url);',
].join(' ');

/**
 * The esbuild options of a handler bundle (`npm run build` and synth in this repository use the
 * same): ESM for Node 20 and later, the AWS SDK bundled at the version fanin pins (tree-shaken from
 * its ES modules), minified, with a linked source map (`NODE_OPTIONS=--enable-source-maps` makes
 * stack traces point at `shared/…`) that holds the mappings but not the sources (a third of the
 * size; a stack trace needs only file, line and column).
 *
 * Why the SDK is bundled rather than taken from the Lambda runtime: the handlers then run on the
 * SDK version fanin is tested with, not whichever one the runtime carries that month, and one
 * tree-shaken ES module loads faster than the SDK's CommonJS packages (measured for `reply`:
 * 1,298 KiB bundled against 773 KiB with `@aws-sdk/*` external, but its import took 0.56 s
 * against 1.6 s resolving the SDK from node_modules).
 */
export function handlerBuildOptions(entry: string, outfile: string) {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node' as const,
    format: 'esm' as const,
    target: 'node20',
    // ESM builds first (tree shaking of the SDK); CommonJS as the fallback.
    mainFields: ['module', 'main'],
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    banner: { js: ESM_REQUIRE_BANNER },
    logLevel: 'warning' as const,
  };
}

/** The file name of a handler's bundle inside its asset (and under `dist/handlers/<name>/`). */
export const HANDLER_BUNDLE = 'handler.mjs';

/** Where `npm run build` writes a handler's bundle, relative to the package root. */
export function prebuiltHandlerDir(root: string, handler: string): string {
  return path.join(root, 'dist', 'handlers', handler);
}

/** The `index.mjs` and `definitions.mjs` of a handler asset. */
export function assetWrapper(definitionsJson: string): Record<'index.mjs' | 'definitions.mjs', string> {
  return {
    'definitions.mjs': `process.env.FANIN_DEFINITIONS = ${JSON.stringify(definitionsJson)};\n`,
    'index.mjs': `import './definitions.mjs';\nexport { handler } from './${HANDLER_BUNDLE}';\n`,
  };
}

/**
 * Writes a handler asset into `outputDir`. Its fields are what CDK's asset cache compares (it
 * serializes the bundling options), so two handlers never share a cached asset.
 */
class HandlerAssetBundler implements ILocalBundling {
  public constructor(
    private readonly handler: string,
    /** The pre-bundled `handler.mjs`, or undefined to bundle `entry` now. */
    private readonly prebuilt: string | undefined,
    private readonly entry: string | undefined,
    private readonly definitionsJson: string,
  ) {}

  public tryBundle(outputDir: string): boolean {
    mkdirSync(outputDir, { recursive: true });
    const bundle = path.join(outputDir, HANDLER_BUNDLE);
    if (this.prebuilt) {
      copyFileSync(this.prebuilt, bundle);
      if (existsSync(`${this.prebuilt}.map`)) copyFileSync(`${this.prebuilt}.map`, `${bundle}.map`);
    } else if (this.entry) {
      esbuild().buildSync(handlerBuildOptions(this.entry, bundle));
    } else {
      throw new Error(`fanin: no code for the ${this.handler} handler`);
    }
    for (const [file, text] of Object.entries(assetWrapper(this.definitionsJson))) {
      writeFileSync(path.join(outputDir, file), text);
    }
    return true;
  }
}

/** esbuild, loaded only when a handler is bundled from source (a development checkout of fanin). */
function esbuild(): typeof import('esbuild') {
  try {
    return createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  } catch (error) {
    throw new Error(
      `fanin: bundling the handlers from source needs esbuild (a devDependency of the fanin repository); the @fanin/cdk package ships them pre-bundled: ${String(error)}`,
    );
  }
}

/**
 * The code of a fanin handler: the pre-bundled one under `<root>/dist/handlers/<handler>/` when it
 * exists, else `<root>/functions/<handler>.ts` bundled at synth; either way with these definitions.
 * The Lambda handler is `index.handler`.
 */
export function handlerCode(root: string, handler: string, definitionsJson: string): lambda.Code {
  const prebuiltDir = prebuiltHandlerDir(root, handler);
  const prebuilt = path.join(prebuiltDir, HANDLER_BUNDLE);
  const entry = path.join(root, 'functions', `${handler}.ts`);
  const fromPrebuilt = existsSync(prebuilt);
  if (!fromPrebuilt && !existsSync(entry)) {
    throw new Error(
      `fanin: no code for the ${handler} handler: neither ${prebuilt} (run \`npm run build\`) nor ${entry} exists`,
    );
  }
  return lambda.Code.fromAsset(fromPrebuilt ? prebuiltDir : root, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never used: local bundling always succeeds or throws (no Docker).
      image: lambda.Runtime.NODEJS_24_X.bundlingImage,
      local: new HandlerAssetBundler(
        handler,
        fromPrebuilt ? prebuilt : undefined,
        fromPrebuilt ? undefined : entry,
        definitionsJson,
      ),
    },
  });
}
