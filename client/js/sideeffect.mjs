// sideeffect.mjs — side-effect-free evaluation for the page's Runtime realm.
//
// DevTools asks for completions and for the eager-evaluation preview with
// Runtime.evaluate{throwOnSideEffect:true}: `globalThis`, `document`,
// `location.href`, `'abc'`, `String.prototype`. V8 runs such code under a
// side-effect checker; a page has no such checker, so this module answers
// the part DevTools needs and nothing more: a property PATH.
//
//   path    := primary step*
//   primary := `this` | identifier | number | 'string' | "string"
//   step    := `.` identifier | `?.` identifier | `[` number|string `]` | `?.[` number|string `]`
//
// Reading a path runs no page code except native getters (the DOM's
// `document.title`, `location.href`): a data property is read from its
// descriptor, an accessor whose getter is a function with `[native code]`
// is called, any other getter refuses with V8's side-effect EvalError.
// A bare identifier that is no property of the global object (a top-level
// let/const/class) is read with an indirect eval of that identifier alone,
// which has no effect beyond reading the binding. Anything that is not a
// path refuses, as V8 refuses a call it cannot prove free of effects.
//
// Known gap (documented): a Proxy's getOwnPropertyDescriptor/getPrototypeOf
// traps run while its path is read; JavaScript cannot tell a Proxy apart.

/** Words that are not identifiers here (they would not be a read). */
const RESERVED = new Set(['break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do',
  'else', 'export', 'extends', 'finally', 'for', 'function', 'if', 'import', 'in', 'instanceof', 'new', 'return',
  'super', 'switch', 'throw', 'try', 'typeof', 'var', 'void', 'while', 'with', 'yield', 'let', 'static', 'enum',
  'await', 'implements', 'package', 'protected', 'interface', 'private', 'public', 'async', 'of']);
const LITERALS = new Map([['true', true], ['false', false], ['null', null]]);
const IDENT = /^[A-Za-z_$][\w$]*/;
const NUMBER = /^(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/;
const STRING = /^(?:'[^'\\\n\r]*'|"[^"\\\n\r]*")/;
const MAX_PATH_BYTES = 1024;
const MAX_STEPS = 64;

const fnToString = Function.prototype.toString;
const gopd = Object.getOwnPropertyDescriptor;
const getProto = Object.getPrototypeOf;
const NATIVE = /\{\s*\[native code\]\s*\}\s*$/;

/**
 * @typedef {{kind:'this'} | {kind:'ident', name:string} | {kind:'value', value:any}} Primary
 * @typedef {{key:string|number, optional:boolean}} Step
 * @typedef {{primary:Primary, steps:Step[]}} Path
 */

/**
 * Parses a property path; null when the expression is anything else.
 * @param {string} expr
 * @returns {Path|null}
 */
export function parsePath(expr) {
  if (typeof expr !== 'string' || expr.length > MAX_PATH_BYTES) return null;
  let s = expr.trim();
  /** @type {Primary} */
  let primary;
  let m;
  if ((m = IDENT.exec(s))) {
    const w = m[0];
    if (w === 'this') primary = { kind: 'this' };
    else if (LITERALS.has(w)) primary = { kind: 'value', value: LITERALS.get(w) };
    else if (RESERVED.has(w)) return null;
    else primary = { kind: 'ident', name: w };
  } else if ((m = NUMBER.exec(s))) {
    primary = { kind: 'value', value: Number(m[0]) };
  } else if ((m = STRING.exec(s))) {
    primary = { kind: 'value', value: m[0].slice(1, -1) };
  } else {
    return null;
  }
  s = s.slice(m[0].length).trimStart();
  /** @type {Step[]} */
  const steps = [];
  while (s.length) {
    if (steps.length >= MAX_STEPS) return null;
    let optional = false;
    if (s.startsWith('?.')) { optional = true; s = s.slice(2).trimStart(); } else if (s[0] === '.') { s = s.slice(1).trimStart(); } else if (s[0] !== '[') return null;
    if (s[0] === '[') {
      s = s.slice(1).trimStart();
      let key;
      if ((m = NUMBER.exec(s))) key = String(Number(m[0]));
      else if ((m = STRING.exec(s))) key = m[0].slice(1, -1);
      else return null;
      s = s.slice(m[0].length).trimStart();
      if (s[0] !== ']') return null;
      s = s.slice(1).trimStart();
      steps.push({ key, optional });
    } else {
      if (!(m = IDENT.exec(s))) return null;
      steps.push({ key: m[0], optional });
      s = s.slice(m[0].length).trimStart();
    }
  }
  return { primary, steps };
}

/** Thrown to refuse: the read would run page code. */
export class SideEffect extends Error {}

/**
 * Reads obj[key] running no page code but native getters.
 * @param {any} obj @param {string|number} key
 */
export function readProperty(obj, key) {
  for (let o = Object(obj); o !== null; o = getProto(o)) {
    const d = gopd(o, key);
    if (!d) continue;
    if ('value' in d) return d.value;
    if (typeof d.get !== 'function') return undefined;
    if (!isNative(d.get)) throw new SideEffect('getter');
    return d.get.call(obj);
  }
  return undefined;
}

/** @param {Function} f */
function isNative(f) {
  try { return NATIVE.test(fnToString.call(f)); } catch (e) { return false; }
}

/**
 * Evaluates a path. Returns {ok:true,v} for a value, {ok:false,v} for an
 * exception a real evaluation would throw (TypeError on undefined, the
 * binding's ReferenceError), or null when the read would run page code or
 * the expression is not a path (the caller answers the side-effect EvalError).
 * @param {string} expr
 * @param {any} global
 * @param {(code:string) => any} evalFn indirect eval, for lexical bindings
 * @returns {{ok:boolean, v:any}|null}
 */
export function evaluatePath(expr, global, evalFn) {
  const p = parsePath(expr);
  if (p === null) return null;
  try {
    let v;
    if (p.primary.kind === 'this') v = global;
    else if (p.primary.kind === 'value') v = p.primary.value;
    else if (hasProperty(global, p.primary.name)) v = readProperty(global, p.primary.name);
    else v = lexical(evalFn, p.primary.name);
    for (const st of p.steps) {
      if (v === null || v === undefined) {
        if (st.optional) return { ok: true, v: undefined };
        return { ok: false, v: new TypeError('Cannot read properties of ' + v + " (reading '" + st.key + "')") };
      }
      v = readProperty(v, st.key);
    }
    return { ok: true, v };
  } catch (e) {
    if (e instanceof SideEffect) return null;
    return { ok: false, v: e };
  }
}

/** @param {any} g @param {string} name */
function hasProperty(g, name) {
  for (let o = g; o !== null; o = getProto(o)) if (gopd(o, name)) return true;
  return false;
}

/**
 * A global lexical binding (or a ReferenceError), by an indirect eval of
 * the identifier alone. A page whose CSP forbids eval refuses.
 * @param {(code:string) => any} evalFn @param {string} name
 */
function lexical(evalFn, name) {
  try {
    return evalFn(name);
  } catch (e) {
    if (e instanceof ReferenceError) throw e;
    throw new SideEffect('eval refused');
  }
}
