// eslint's flat config for the explorer's JavaScript (explorer/js/), its build (explorer/build.js)
// and its unit tests (tests/js/). scripts/js.sh runs it with prettier and node's test runner. The
// bundles esbuild writes (explorer/dist/) are generated: not linted.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/", ".venv/", "**/*.mjs", "explorer/dist/"] },
  js.configs.recommended,
  {
    files: ["**/*.js"],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: "module",
      globals: { ...globals.browser },
    },
    rules: {
      "max-lines": ["error", { max: 300, skipBlankLines: true, skipComments: true }],
      "max-lines-per-function": ["error", { max: 50, skipBlankLines: true, skipComments: true }],
      "no-undef": "error",
      "no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      "prefer-const": "error",
      eqeqeq: ["error", "always", { null: "ignore" }],
      "no-var": "error",
    },
  },
  {
    files: ["tests/js/**/*.js", "eslint.config.js", "explorer/build.js"],
    languageOptions: { globals: { ...globals.node } },
  },
];
