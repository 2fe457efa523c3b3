// The Node-only modules the engine imports by a relative specifier (gpu/host.ts), handed over
// by name so that the bundled CLIs (scripts/cli.mjs) carry them: a bundle cannot resolve a
// relative import whose specifier is a variable.
import { provideNodeOnly } from '../gpu/host';

provideNodeOnly('./nodeWebgpu', () => import('../gpu/nodeWebgpu'));
