// Process helpers: every process the suite starts is started here, in its own
// process group, and stopped here by that group's id (SIGTERM, then SIGKILL).
import { spawn } from 'node:child_process';

/** @param {number} ms */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits for promise at most ms; the timer is cleared so it never keeps the test
 * process alive after the promise won.
 * @param {Promise<unknown>} promise
 * @param {number} ms
 */
export async function within(promise, ms) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  await Promise.race([promise, new Promise((r) => { timer = setTimeout(r, ms); })]);
  clearTimeout(timer);
}

/** @param {number} pid */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return /** @type {NodeJS.ErrnoException} */ (e).code === 'EPERM';
  }
}

/**
 * Spawns a command in a new process group and collects its output.
 * @param {string} cmd
 * @param {string[]} args
 * @param {import('node:child_process').SpawnOptions} [opts] stdio defaults to ['ignore', 'pipe', 'pipe']
 */
export function spawnGroup(cmd, args, opts = {}) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts, detached: true });
  const out = { stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (d) => { out.stdout += d; });
  child.stderr?.setEncoding('utf8').on('data', (d) => { out.stderr += d; });
  /** @type {Promise<{code: number|null, signal: string|null}>} */
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
    child.on('error', () => resolve({ code: null, signal: null }));
  });
  let exitedNow = false;
  exited.then(() => { exitedNow = true; });
  return {
    child,
    out,
    exited,
    get hasExited() { return exitedNow; },
    /**
     * SIGTERM to the process itself (or its group), SIGKILL to the group after graceMs.
     * @param {{graceMs?: number, group?: boolean}} [o]
     */
    async stop({ graceMs = 5000, group = false } = {}) {
      const pid = /** @type {number} */ (child.pid);
      if (!pid) return { killed: false };
      if (!exitedNow) {
        try { process.kill(group ? -pid : pid, 'SIGTERM'); } catch { /* gone */ }
        await within(exited, graceMs);
      }
      let killed = false;
      // Whatever is left in the group we created goes now.
      try { process.kill(-pid, 'SIGKILL'); killed = !exitedNow; } catch { /* group empty */ }
      await within(exited, 2000);
      return { killed };
    },
  };
}

/**
 * Polls fn until it returns a truthy value or the deadline passes.
 * @template T
 * @param {() => T | Promise<T>} fn
 * @param {{timeoutMs?: number, intervalMs?: number, what?: string}} [o]
 * @returns {Promise<T>}
 */
export async function waitFor(fn, { timeoutMs = 60_000, intervalMs = 100, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}` + (last ? `: ${last}` : ''));
    }
    await sleep(intervalMs);
  }
}

/**
 * Bounds one step: a CDP answer that never comes fails the test with a name
 * instead of hanging until the whole-test timeout.
 * @template T
 * @param {Promise<T>} promise
 * @param {string} what
 * @param {number} [ms]
 * @returns {Promise<T>}
 */
export function step(promise, what, ms = 60_000) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer after ${ms} ms: ${what}`)), ms);
  });
  return /** @type {Promise<T>} */ (Promise.race([promise, timeout])).finally(() => clearTimeout(timer));
}
