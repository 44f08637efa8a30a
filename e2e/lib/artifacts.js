// Where screenshots and CDP logs go: $E2E_ARTIFACTS (scripts/e2e.sh sets and prints
// it) or a fresh temp folder, printed once per test file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

let dir = '';

export function artifactsDir() {
  if (!dir) {
    dir = process.env.E2E_ARTIFACTS || fs.mkdtempSync(path.join(os.tmpdir(), 'inspector-worker-e2e-'));
    fs.mkdirSync(dir, { recursive: true });
    console.log(`# e2e artifacts (screenshots, CDP logs): ${dir}`);
  }
  return dir;
}

/** @param {string} name */
export function artifactPath(name) {
  return path.join(artifactsDir(), name);
}
