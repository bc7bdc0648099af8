/** Types for scripts/node22.mjs (a plain script shared with .ci/run). */
export declare const NODE22_PACKAGE: string;
export declare const NODE22_PATH: string;
export declare function ensureNode22(log?: (line: string) => void): string;
