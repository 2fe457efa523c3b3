import { preview } from 'vite';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
  }
}

/** Serves the built page (dist/) on a free localhost port for the browser tests. */
export default async function serve(project: TestProject) {
  const server = await preview({ preview: { port: 0, host: '127.0.0.1', strictPort: false } });
  const address = server.httpServer.address();
  if (!address || typeof address === 'string') throw new Error('preview server has no port');
  project.provide('baseUrl', `http://127.0.0.1:${address.port}/`);
  return async () => {
    await server.close();
  };
}
