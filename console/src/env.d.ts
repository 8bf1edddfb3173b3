/// <reference types="vite/client" />

/** The console's version from package.json, e.g. "v0.1.0" (vite define). */
declare const __APP_VERSION__: string;
