/**
 * The emulators moved to `local/emulators.ts`, where the local runtime (`npm start`) uses
 * them too. This re-export keeps older imports (benchmark scripts) working.
 */
export * from '../../local/emulators.ts';
