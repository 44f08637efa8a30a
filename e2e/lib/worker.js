// Starts the real inspector-worker binary in front of the fixture host.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { alive, sleep, spawnGroup, waitFor } from './procs.js';

export const FIXTURE = fileURLToPath(new URL('../fixtures/host.js', import.meta.url));
export const FIXTURE_URL = new URL('../fixtures/host.js', import.meta.url).href;
/** The script of the host's `tstart` threads. */
export const THREAD_FIXTURE = fileURLToPath(new URL('../fixtures/thread-worker.js', import.meta.url));
export const THREAD_FIXTURE_URL = new URL('../fixtures/thread-worker.js', import.meta.url).href;

/** The worker binary; scripts/e2e.sh builds it from the checkout and sets this. */
export function workerBin() {
  const bin = process.env.INSPECTOR_WORKER_BIN;
  if (!bin || !fs.existsSync(bin)) {
    throw new Error(`INSPECTOR_WORKER_BIN=${bin ?? ''} is not a file: run the suite through 'bash scripts/e2e.sh', which builds the worker`);
  }
  return bin;
}

const LISTENING = /^inspector-worker: listening on http:\/\/127\.0\.0\.1:(\d+)\s*$/m;

/**
 * `inspector-worker run --port 0 -- node fixtures/host.js <trigger-dir>`; resolves once
 * the worker listens, the host has logged its first line and /json/list has the target.
 * `fixture` runs another host script with the same contract (e.g. fixtures/page-host.js);
 * `runArgs` are more flags of `run` (e.g. ['--watch']); `hostArgs` more arguments
 * of the fixture, after the trigger dir.
 * @param {{fixture?: string, runArgs?: string[], hostArgs?: string[]}} [opts]
 */
export async function startWorker({ fixture = FIXTURE, runArgs = [], hostArgs = [] } = {}) {
  const triggerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-e2e-host-'));
  const proc = spawnGroup(workerBin(), ['run', '--port', '0', ...runArgs, '--', process.execPath, fixture, triggerDir, ...hostArgs], {
    env: { ...process.env },
  });
  let hostPid = 0;
  let stopped = false;
  const w = {
    proc,
    triggerDir,
    port: 0,
    /** @type {{id: string, type: string, title: string, url: string, webSocketDebuggerUrl: string, devtoolsFrontendUrl: string}} */
    target: /** @type {any} */ (null),
    get hostPid() { return hostPid; },
    /** The target's WebSocket as host:port/path (the frontend's ws= parameter). */
    get wsHostPath() { return w.target.webSocketDebuggerUrl.replace(/^ws:\/\//, ''); },
    get wsPath() { return new URL(w.target.webSocketDebuggerUrl).pathname; },
    /**
     * Asks the host to act (see fixtures/host.js): written then renamed, so the host
     * never reads half a file.
     * @param {'log'|'pause'|'break'|'thread'|'tstart'|'twork'} name
     * @param {string} text
     */
    trigger(name, text) {
      const tmp = path.join(triggerDir, `.${name}.tmp`);
      fs.writeFileSync(tmp, text);
      fs.renameSync(tmp, path.join(triggerDir, name));
    },
    /** Resolves when the host has consumed the trigger file. */
    async triggered(/** @type {string} */ name) {
      await waitFor(() => !fs.existsSync(path.join(triggerDir, name)), { what: `host to take trigger '${name}'`, timeoutMs: 30_000 });
    },
    /** The worker's stderr and stdout so far, for failure messages. */
    output() {
      return `--- worker stderr ---\n${proc.out.stderr.slice(-4000)}\n--- worker stdout ---\n${proc.out.stdout.slice(-2000)}`;
    },
    /**
     * SIGTERM to the worker, SIGKILL to its process group after 10 s; then the host
     * (by the PID it wrote) must be gone too, else it is killed and reported.
     * @returns {Promise<{workerExit: {code: number|null, signal: string|null} | null, workerKilled: boolean, hostLeaked: boolean}>}
     */
    async stop() {
      if (stopped) return { workerExit: null, workerKilled: false, hostLeaked: false };
      stopped = true;
      // A restarted host (run --watch) wrote its own PID over the first one's.
      try { hostPid = Number(fs.readFileSync(path.join(triggerDir, 'host.pid'), 'utf8')) || hostPid; } catch { /* none */ }
      const { killed } = await proc.stop({ graceMs: 10_000 });
      const workerExit = proc.hasExited ? await proc.exited : null;
      let hostLeaked = false;
      if (hostPid) {
        const deadline = Date.now() + 5000;
        while (alive(hostPid) && Date.now() < deadline) await sleep(100);
        if (alive(hostPid)) {
          hostLeaked = true;
          try { process.kill(hostPid, 'SIGKILL'); } catch { /* gone */ }
        }
      }
      fs.rmSync(triggerDir, { recursive: true, force: true });
      return { workerExit, workerKilled: killed, hostLeaked };
    },
  };
  try {
    const port = await waitFor(() => {
      if (proc.hasExited) throw new Error('worker exited');
      const m = proc.out.stderr.match(LISTENING);
      return m ? Number(m[1]) : 0;
    }, { what: "the worker's 'inspector-worker: listening on' line", timeoutMs: 60_000 });
    w.port = port;
    hostPid = await waitFor(() => {
      if (proc.hasExited) throw new Error('worker exited');
      const f = path.join(triggerDir, 'host.pid');
      return fs.existsSync(f) ? Number(fs.readFileSync(f, 'utf8')) : 0;
    }, { what: 'the host fixture to start', timeoutMs: 60_000 });
    const list = await waitFor(async () => {
      const res = await fetch(`http://127.0.0.1:${port}/json/list`);
      const body = await res.json();
      return Array.isArray(body) && body.length ? body : null;
    }, { what: '/json/list to list the target', timeoutMs: 30_000 });
    if (list.length !== 1) throw new Error(`/json/list should list exactly one target, got ${JSON.stringify(list)}`);
    w.target = list[0];
    return w;
  } catch (e) {
    const tree = processTree(/** @type {number} */ (proc.child.pid));
    await w.stop();
    /** @type {Error} */ (e).message += `\n--- worker process tree at failure ---\n${tree}`;
    if (/--inspect-wait/.test(tree) && !hostPid) {
      /** @type {Error} */ (e).message += '\nthe node host is still waiting for a debugger (--inspect-wait): the worker never released it with Runtime.runIfWaitingForDebugger';
    }
    throw new Error(`${/** @type {Error} */ (e).message}\n${w.output()}`);
  }
}

/** The fixture's source lines. */
export const FIXTURE_LINES = fs.readFileSync(FIXTURE, 'utf8').split('\n');

/**
 * The 1-based line number of the only fixture line that contains text.
 * @param {string} text
 * @param {string} [file]  another fixture (default host.js)
 */
export function fixtureLine(text, file) {
  const lines = file ? fs.readFileSync(file, 'utf8').split('\n') : FIXTURE_LINES;
  const hits = lines.flatMap((l, i) => (l.includes(text) ? [i + 1] : []));
  if (hits.length !== 1) throw new Error(`fixture has ${hits.length} lines containing ${JSON.stringify(text)}`);
  return hits[0];
}

/** `ps` of the worker and its children, for failure messages. */
function processTree(/** @type {number} */ pid) {
  try {
    const all = execFileSync('ps', ['-eo', 'pid,ppid,pgid,stat,wchan:20,etime,args'], { encoding: 'utf8' }).split('\n');
    const pids = new Set([String(pid)]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const line of all.slice(1)) {
        const [p, pp] = line.trim().split(/\s+/);
        if (p && pids.has(pp) && !pids.has(p)) { pids.add(p); grew = true; }
      }
    }
    return [all[0], ...all.slice(1).filter((l) => pids.has(l.trim().split(/\s+/)[0]))].map((l) => l.slice(0, 200)).join('\n');
  } catch (err) {
    return `(ps failed: ${err})`;
  }
}
