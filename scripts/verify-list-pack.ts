/**
 * How `npm pack -w clients/verify-list` builds the client (its `prepack`): one ES module,
 * clients/verify-list/dist/main.js, with the shared rules it imports from @svc/contracts (the
 * waiting sentences the web console also shows) bundled in, since the package is installed where
 * no workspace package is and has no dependencies. Node's own modules stay imports. The sources
 * are bundled, not @svc/contracts' tsc output (its `production` condition), which a checkout that
 * never ran `npm run build` does not have: the same choice as the console's (console-build.ts).
 */
import { join } from 'node:path';
import { build, defaultServerConditions } from 'vite';

const CLIENT = join(import.meta.dirname, '..', 'clients', 'verify-list');

await build({
  root: CLIENT,
  configFile: false,
  logLevel: 'warn',
  ssr: {
    noExternal: true,
    target: 'node',
    resolve: { conditions: defaultServerConditions.filter((condition) => condition !== 'development|production') },
  },
  build: {
    ssr: join(CLIENT, 'src', 'main.ts'),
    outDir: join(CLIENT, 'dist'),
    emptyOutDir: true,
    target: 'node20',
    minify: false,
    sourcemap: false,
    rolldownOptions: { output: { entryFileNames: 'main.js' } },
  },
});
