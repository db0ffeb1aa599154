// Modelled on Effect's own (Effect-TS/effect, branch v3): eslint's and typescript-eslint's recommended
// rules, dprint formatting through @effect/eslint-plugin, and the same rule choices, with the successor of
// eslint-plugin-import (import-x), which needs neither @eslint/compat nor FlatCompat.
import * as effectEslint from "@effect/eslint-plugin"
import js from "@eslint/js"
import importX from "eslint-plugin-import-x"
import sortDestructureKeys from "eslint-plugin-sort-destructure-keys"
import { defineConfig } from "eslint/config"
import globals from "globals"
import tseslint from "typescript-eslint"

export default defineConfig(
  {
    ignores: ["**/dist/**", "**/node_modules/**", "coverage/**", "**/.cache/**", "**/*.md"]
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  effectEslint.configs.dprint,
  {
    // Every folder: src, command (the standalone command's own), test, bench, scripts, examples, bin.
    files: ["**/*.{ts,mts,cts,js,mjs,cjs}"],
    plugins: {
      "import-x": importX,
      "sort-destructure-keys": sortDestructureKeys
    },
    languageOptions: {
      parser: tseslint.parser,
      ecmaVersion: "latest",
      sourceType: "module",
      globals: globals.node
    },
    linterOptions: {
      reportUnusedDisableDirectives: "error"
    },
    rules: {
      "no-fallthrough": "off",
      "no-irregular-whitespace": "off",
      // Matching control characters is the job here: terminal-safe output strips them, the bundle's
      // checks look for NUL bytes.
      "no-control-regex": "off",
      "object-shorthand": "error",
      "prefer-destructuring": "off",
      "sort-imports": "off",
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.property.name='push'] > SpreadElement.arguments",
          message: "Do not use spread arguments in Array.push"
        }
      ],
      "no-unused-vars": "off",
      "require-yield": "off",
      "prefer-rest-params": "off",
      "prefer-spread": "off",
      "import-x/first": "error",
      "import-x/newline-after-import": "error",
      "import-x/no-duplicates": "error",
      "sort-destructure-keys/sort-destructure-keys": "error",
      "@typescript-eslint/array-type": ["warn", { default: "generic", readonly: "generic" }],
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-empty-object-type": "off",
      "@typescript-eslint/no-unsafe-function-type": "off",
      "@typescript-eslint/no-wrapper-object-types": "off",
      "@typescript-eslint/consistent-type-imports": "warn",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/ban-ts-comment": "off",
      "@typescript-eslint/no-array-constructor": "off",
      "@typescript-eslint/no-use-before-define": "off",
      "@typescript-eslint/no-namespace": "off",
      "@effect/dprint": [
        "error",
        {
          config: {
            indentWidth: 2,
            // The width the code was written to: of the widths tried, the one that reflows the fewest lines.
            lineWidth: 160,
            semiColons: "asi",
            quoteStyle: "alwaysDouble",
            trailingCommas: "never",
            operatorPosition: "maintain",
            "arrowFunction.useParentheses": "force"
          }
        }
      ]
    }
  },
  {
    // The npm bin is CommonJS (bin/package.json), as is anything named .cjs.
    files: ["bin/**/*.js", "**/*.cjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: { ...globals.node, ...globals.commonjs }
    },
    rules: {
      "@typescript-eslint/no-require-imports": "off"
    }
  },
  {
    // The command's start-up devices load modules on first use.
    files: ["command/**/*"],
    rules: {
      "@typescript-eslint/no-require-imports": "off"
    }
  },
  {
    // Tests spread the few events a step returned; the rule guards against spreading large arrays.
    files: ["test/**/*"],
    rules: {
      "no-restricted-syntax": "off"
    }
  },
  {
    // The library writes through Console and imports Effect's modules, not its barrels.
    files: ["src/**/*"],
    rules: {
      "no-console": "error",
      "@effect/no-import-from-barrel-package": [
        "error",
        { packageNames: ["effect", "@effect/platform", "@effect/cli"] }
      ]
    }
  }
)
