import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import tsconfig from './tsconfig.json' with { type: 'json' };

/**
 * Ignores everything in the checkout but `paths` (folders or files, relative to it): `eslint .`
 * then lints the project's sources, not a scratch file or folder someone keeps in the root.
 */
function allOtherPaths(paths) {
  const patterns = ['*'];
  for (const path of paths) {
    const parts = path.split('/');
    // A nested path (sdk/src): its parents are walked into, their other entries ignored.
    for (let depth = 1; depth < parts.length; depth++) {
      const parent = parts.slice(0, depth).join('/');
      patterns.push(`!${parent}`, `${parent}/*`);
    }
    patterns.push(`!${path}`);
  }
  return patterns;
}

export default tseslint.config(
  // What the project compiles (tsconfig.json's `include`) is what it lints.
  { ignores: [...allOtherPaths(tsconfig.include), 'sdk/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // A file of the service holds one idea: past 450 lines it is split along its seams.
    files: ['src/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 450 }] },
  },
  {
    // The dashboard's script runs in the browser.
    files: ['src/dashboard/assets/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { document: 'readonly', navigator: 'readonly', Element: 'readonly', HTMLSelectElement: 'readonly' },
    },
  },
);
