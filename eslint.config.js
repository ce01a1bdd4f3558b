import js from '@eslint/js';
import path from 'node:path';
import tseslint from 'typescript-eslint';

/** The folder of the workspace package a file belongs to: libs/shared/<name>, libs/testkit, services/<name>, clients/<name>. */
const PACKAGE_ROOT = /^(libs\/shared\/[^/]+|libs\/testkit|services\/[^/]+|clients\/[^/]+)\//;
const SERVICES = ['gateway', 'qr-worker', 'verify-worker'];

/**
 * The layout's rule: a package reaches another only through its name and exports, never through a
 * relative path or another package's files, and no service imports another (each runs as its own
 * process; scripts/ composes them for embedded mode).
 */
const layout = {
  rules: {
    'package-boundaries': {
      meta: { type: 'problem', schema: [] },
      create(context) {
        const file = path
          .relative(import.meta.dirname, context.filename)
          .split(path.sep)
          .join('/');
        const root = PACKAGE_ROOT.exec(file)?.[1];
        if (root === undefined) return {};
        const ownService = root.startsWith('services/') ? root.slice('services/'.length) : undefined;
        const check = (node) => {
          const source = node.source?.value;
          if (typeof source !== 'string') return;
          if (source.startsWith('.')) {
            const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), source));
            if (!target.startsWith(`${root}/`))
              context.report({ node, message: `'${source}' leaves ${root}: import another package by its name (@svc/...).` });
            return;
          }
          const match = /^@svc\/([^/]+)(\/.*)?$/.exec(source);
          if (match === null) return;
          if (/^\/(src|dist|test)(\/|$)/.test(match[2] ?? ''))
            context.report({ node, message: `'${source}' reaches into a package's files: import it by its exports.` });
          if (ownService !== undefined && SERVICES.includes(match[1]) && match[1] !== ownService)
            context.report({
              node,
              message: `services/${ownService} imports the service @svc/${match[1]}: a service never imports another.`,
            });
        };
        return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
      },
    },
  },
};

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'coverage/**', '.tmp/**'] },
  js.configs.recommended,
  // Type-aware rules: floating promises, misused promises, unsafe `any` flows, needless awaits.
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'clients/*/bin/*.js', 'test/process/fixtures/*.mjs', 'bench/soak/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['libs/**/*.ts', 'services/**/*.ts', 'clients/**/*.ts'],
    plugins: { layout },
    rules: { 'layout/package-boundaries': 'error' },
  },
  {
    // vitest's asymmetric matchers (`expect.any(String)`) are typed `any` by design.
    files: ['**/test/**/*.ts', 'test/**/*.ts'],
    rules: { '@typescript-eslint/no-unsafe-assignment': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
