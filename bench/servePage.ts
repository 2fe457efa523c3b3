// The built page, served on a free localhost port, for the benches that open it in Chromium.
// The build is a production one whatever the caller's NODE_ENV: vite-node (which runs
// `npm run bench`) sets NODE_ENV=development, and Vite then bundles React's development
// build, several times slower than what users get.
import { existsSync } from 'node:fs';
import { build, type PreviewServer, preview } from 'vite';

export interface ServedPage {
  origin: string;
  server: PreviewServer;
  /** What went differently from a fresh production build, for the table's notes. */
  notes: string[];
}

/** Builds (unless `--no-build` is on the command line) and serves dist/. */
export async function serveBuiltPage(entry = 'index.html'): Promise<ServedPage> {
  const notes: string[] = [];
  if (!process.argv.includes('--no-build')) {
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      await build({ logLevel: 'warn', mode: 'production' });
    } catch (error) {
      if (!existsSync(`dist/${entry}`)) throw error;
      notes.push(
        `vite build failed (${String(error).slice(0, 120)}); measured the existing dist/.`,
      );
    } finally {
      if (nodeEnv === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = nodeEnv;
    }
  } else if (!existsSync(`dist/${entry}`)) {
    throw new Error('no dist/: run without --no-build');
  }
  const server = await preview({
    logLevel: 'warn',
    preview: { port: 0, host: '127.0.0.1', strictPort: false },
  });
  const address = server.httpServer.address();
  if (!address || typeof address === 'string') throw new Error('preview server has no port');
  return { origin: `http://127.0.0.1:${address.port}`, server, notes };
}
