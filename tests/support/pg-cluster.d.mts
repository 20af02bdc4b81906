// Types of pg-cluster.mjs for the TypeScript tests and benchmark.
export declare function startPostgres(options?: { private?: boolean }): Promise<{
  url: string;
  dataDir: string | undefined;
  restart: (() => Promise<void>) | undefined;
  stop: () => Promise<void>;
}>;
export declare function sql(url: string, text: string, params?: unknown[]): Promise<Array<Record<string, unknown>>>;
