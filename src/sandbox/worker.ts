// Worker entry for both hosts: a Web Worker (bundled by Vite) or a Node worker_thread (bundled
// at first use by nodeWorker.ts). It only picks the message port; workerServe does the rest.

import type { FromWorker, ToWorker } from './protocol';
import { serveSandbox, type WorkerEndpoint } from './workerServe';

interface NodePort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (message: ToWorker) => void): void;
}

async function findEndpoint(): Promise<WorkerEndpoint> {
  const scope = globalThis as unknown as {
    WorkerGlobalScope?: unknown;
    postMessage(message: unknown): void;
    addEventListener(type: 'message', listener: (event: MessageEvent<ToWorker>) => void): void;
  };
  if (scope.WorkerGlobalScope !== undefined) {
    return {
      post: (message: FromWorker) => scope.postMessage(message),
      listen: (listener) => scope.addEventListener('message', (event) => listener(event.data)),
    };
  }
  // A variable specifier keeps browser bundlers from trying to resolve a Node built-in.
  const specifier = 'node:worker_threads';
  const { parentPort } = (await import(/* @vite-ignore */ specifier)) as {
    parentPort: NodePort | null;
  };
  if (!parentPort) throw new Error('sandbox worker started outside a worker');
  return {
    post: (message: FromWorker) => parentPort.postMessage(message),
    listen: (listener) => parentPort.on('message', listener),
  };
}

await serveSandbox(await findEndpoint());
