/**
 * The emulators moved to `shared/local/emulators.ts`, where the local runtime (`npm start`) uses
 * them too. This re-export keeps older imports (benchmark scripts) working.
 */
export * from '../../shared/local/emulators.ts';
