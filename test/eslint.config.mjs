// Lint rules for the whole project (run from the root: `eslint -c test/eslint.config.mjs .`).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'test/n8n-e2e/n8n/**',
      'test/n8n-e2e/n8n-next/**',
      'test/n8n-e2e/node24/**',
      'test/n8n-e2e/work/**',
      'test/bench/out/**',
      'coverage/**',
      'n8n-nodes/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.mjs', '**/*.cjs', '**/*.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        URL: 'readonly',
      },
    },
  },
);
