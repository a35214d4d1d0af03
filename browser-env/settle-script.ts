// The settle's eyes inside the page: an init script, run in every frame's main world before page scripts,
// that attributes asynchronous work to its cause. Every timer, animation frame, MessageChannel message,
// fetch/XHR (and the body read after it), and WebSocket message awaiting a reply carries the cause of the task
// that started it: a trusted input event (the action), the loading of this document (a navigation), or
// nothing (ambient work: an interval, an animation loop, a poll that was running before the action).
// `__grove.settle(since, ms, navSeen)` then waits for the work caused at or after `since` — not for the page
// to be silent — plus one animation frame so an effect an already-running rAF loop applies is painted.
//
// How a cause flows: each wrapped callback sets `ctx` when it runs and leaves it set for the promise
// reactions of its task (an `await` continuation is not observable otherwise); a message on a private channel
// puts the document's default back at the next task. Intervals and the callbacks of ambient work set it to
// null explicitly, so an ambient ticker never inherits a cause.
//
// Limits, so self-rescheduling work the action started cannot hold the step to the cap forever: timers
// longer than 2 s are not waited for, a chain of timers counts for 3 generations, animation frames for 120
// (about 2 s; 3 for loops a loading document starts — most are endless), a WebSocket reply or a
// MessageChannel message for 1 s.
// Sources read for the approach (no code copied): Playwright's `waitForLoadState` and Chromium's
// task-attribution design doc ("Task Attribution" for soft navigations: tasks inherit the id of the task
// that posted them).

export const SETTLE_INIT_SCRIPT = `(() => {
  const W = window;
  if (W.__grove) return;
  const now = Date.now.bind(Date);
  const oSetTimeout = W.setTimeout, oClearTimeout = W.clearTimeout, oSetInterval = W.setInterval, oClearInterval = W.clearInterval;
  const oRaf = W.requestAnimationFrame, oCaf = W.cancelAnimationFrame;
  const oAdd = EventTarget.prototype.addEventListener;
  const OMC = W.MessageChannel, MP = W.MessagePort && W.MessagePort.prototype, oPost = MP && MP.postMessage;
  const MAX_TIMER = 2000, MAX_TIMER_GEN = 3, MAX_RAF_GEN = 120, MAX_BOOT_RAF_GEN = 3, REPLY_MS = 1000;
  const boot = { t: now(), timers: 0, rafs: 0, boot: true };
  const g = { ctx: boot, base: boot, boot, pending: new Set(), seen: [], created: 0, navAt: 0, navEvent: null, popupAt: 0, waiters: new Set() };
  Object.defineProperty(W, '__grove', { value: g, enumerable: false, configurable: false });

  const native = (fn, orig) => {
    try { Object.defineProperty(fn, 'toString', { value: () => Function.prototype.toString.call(orig), enumerable: false }); } catch {}
    return fn;
  };
  // Waiters look again in a task of their own: the promise reactions of the current task (an await after a
  // fetch, which starts the body read) must have run and registered their work first.
  let wakeQueued = false, resetQueued = false, reset = null, waker = null;
  const look = () => { wakeQueued = false; for (const w of [...g.waiters]) w(); };
  const wake = () => {
    if (wakeQueued || !g.waiters.size) return;
    wakeQueued = true;
    if (waker) oPost.call(waker.port2, 0); else oSetTimeout.call(W, look, 0);
  };
  if (OMC) {
    reset = new OMC();
    reset.port1.onmessage = () => { resetQueued = false; g.ctx = g.base; };
    waker = new OMC();
    waker.port1.onmessage = look;
  }
  const enter = (c) => {
    g.ctx = c;
    if (reset && c !== g.base && !resetQueued) { resetQueued = true; oPost.call(reset.port2, 0); }
  };
  const track = (kind, c) => {
    const w = { kind, t: c.t, seq: ++g.created };
    g.pending.add(w);
    g.seen.push(w);
    if (g.seen.length > 400) g.seen.splice(0, 200);
    return w;
  };
  const done = (w) => { if (w && g.pending.delete(w)) wake(); };

  // ---- input: a trusted input event is the action (headless: nobody else produces them)
  const INPUT = ['pointerdown', 'pointerup', 'pointermove', 'mousedown', 'mouseup', 'mousemove', 'mouseover', 'click', 'dblclick',
    'auxclick', 'contextmenu', 'keydown', 'keypress', 'keyup', 'beforeinput', 'input', 'change', 'submit', 'wheel',
    'compositionend', 'paste', 'drop', 'dragend'];
  let lastInput = 0;
  const onInput = (e) => { if (e.isTrusted) { lastInput = now(); enter({ t: lastInput, timers: 0, rafs: 0 }); } };
  for (const type of INPUT) oAdd.call(W, type, onInput, { capture: true, passive: true });
  // A click that opens a new tab or window (target=_blank, a modifier, the middle button): the settle follows it.
  const opensTab = (e) => {
    if (e.ctrlKey || e.metaKey || e.shiftKey || e.button === 1) return true;
    for (const el of e.composedPath()) {
      if (el && el.tagName === 'A' && el.href) {
        const t = (el.getAttribute('target') || '').toLowerCase();
        return t !== '' && t !== '_self' && t !== '_parent' && t !== '_top';
      }
    }
    return false;
  };
  for (const type of ['click', 'auxclick']) oAdd.call(W, type, (e) => { if (e.isTrusted && opensTab(e)) g.popupAt = now(); }, { capture: true, passive: true });
  // Scrolling follows a wheel asynchronously; a page's own scrolling is ambient.
  oAdd.call(W, 'scroll', (e) => { if (e.isTrusted && now() - lastInput < 500) enter({ t: lastInput, timers: 0, rafs: 0 }); }, { capture: true, passive: true });

  // ---- the document's own loading is caused by whatever navigated to it; afterwards unknown work is ambient
  const endBoot = () => oSetTimeout.call(W, () => { g.base = null; if (g.ctx === boot) g.ctx = null; wake(); }, 0);
  if (document.readyState === 'complete') endBoot(); else oAdd.call(W, 'load', endBoot, { once: true });
  oAdd.call(document, 'readystatechange', wake);

  try {
    if (W.navigation) oAdd.call(W.navigation, 'navigate', (e) => {
      if (!e.destination || !e.destination.sameDocument) { g.navAt = now(); g.navEvent = e; wake(); }
    });
  } catch {}

  if (W.open) {
    const oOpen = W.open;
    // A refused popup (a blocked URL, the popup blocker) returns null and opens nothing: no tab to wait for. With
    // noopener a popup that did open returns null too.
    W.open = native(function open(...a) {
      const w = oOpen.apply(this, a);
      if (g.ctx && (w || /noopener|noreferrer/i.test(String(a[2] || '')))) g.popupAt = now();
      return w;
    }, oOpen);
  }

  // ---- timers
  const timers = new Map();
  W.setTimeout = native(function setTimeout(fn, delay, ...args) {
    if (typeof fn !== 'function') return oSetTimeout.call(W, fn, delay, ...args);
    const c = g.ctx;
    const d = Number(delay) || 0;
    const child = c && c.timers < MAX_TIMER_GEN ? { t: c.t, timers: c.timers + 1, rafs: c.rafs, boot: c.boot } : null;
    const w = child && d <= MAX_TIMER ? track('timer', c) : null;
    const id = oSetTimeout.call(W, function () {
      if (w) timers.delete(id);
      enter(child);
      try { return fn.apply(this, args); } finally { done(w); }
    }, delay);
    if (w) timers.set(id, w);
    return id;
  }, oSetTimeout);
  const clear = (id) => { const w = timers.get(id); if (w) { timers.delete(id); done(w); } };
  W.clearTimeout = native(function clearTimeout(id) { clear(id); return oClearTimeout.call(W, id); }, oClearTimeout);
  W.setInterval = native(function setInterval(fn, delay, ...args) {
    if (typeof fn !== 'function') return oSetInterval.call(W, fn, delay, ...args);
    return oSetInterval.call(W, function () { enter(null); return fn.apply(this, args); }, delay);
  }, oSetInterval);
  W.clearInterval = native(function clearInterval(id) { clear(id); return oClearInterval.call(W, id); }, oClearInterval);

  // ---- animation frames
  const frames = new Map();
  // Callbacks of any cause still waiting for a frame: with none, no loop can apply anything in the next one.
  const asked = new Set();
  if (oRaf) {
    W.requestAnimationFrame = native(function requestAnimationFrame(fn) {
      if (typeof fn !== 'function') return oRaf.call(W, fn);
      const c = g.ctx;
      const child = c && c.rafs < (c.boot ? MAX_BOOT_RAF_GEN : MAX_RAF_GEN) ? { t: c.t, timers: c.timers, rafs: c.rafs + 1, boot: c.boot } : null;
      const w = child ? track('animation frame', c) : null;
      const id = oRaf.call(W, function (ts) {
        asked.delete(id);
        if (w) frames.delete(id);
        enter(child);
        try { return fn.call(this, ts); } finally { done(w); }
      });
      if (w) frames.set(id, w);
      asked.add(id);
      return id;
    }, oRaf);
    W.cancelAnimationFrame = native(function cancelAnimationFrame(id) {
      const w = frames.get(id);
      if (w) { frames.delete(id); done(w); }
      asked.delete(id);
      return oCaf.call(W, id);
    }, oCaf);
  }

  // ---- promises that finish in a task nobody wrapped: carry the cause into their reactions
  const carry = (p, kind, c) => {
    const w = track(kind, c);
    return p.then((v) => { enter(c); done(w); return v; }, (e) => { enter(c); done(w); throw e; });
  };
  if (W.fetch) {
    const oFetch = W.fetch;
    W.fetch = native(function fetch(...a) {
      const c = g.ctx;
      const p = oFetch.apply(this, a);
      return c ? carry(p, 'fetch', c) : p;
    }, oFetch);
  }
  const RP = W.Response && W.Response.prototype;
  if (RP) for (const m of ['text', 'json', 'arrayBuffer', 'blob', 'formData', 'bytes']) {
    const o = RP[m];
    if (typeof o !== 'function') continue;
    RP[m] = native(function (...a) { const c = g.ctx; const p = o.apply(this, a); return c ? carry(p, 'fetch', c) : p; }, o);
  }

  // ---- XHR: the page's load handlers run after readystatechange(4), in the same task
  const XP = W.XMLHttpRequest && W.XMLHttpRequest.prototype;
  if (XP) {
    const oSend = XP.send;
    XP.send = native(function send(...a) {
      const c = g.ctx;
      if (c) {
        const w = track('xhr', c);
        const xhr = this;
        const fin = () => { if (xhr.readyState === 4) { enter(c); done(w); } };
        oAdd.call(xhr, 'readystatechange', fin);
        oAdd.call(xhr, 'loadend', fin);
      }
      return oSend.apply(this, a);
    }, oSend);
  }

  // ---- constructors whose events must see the cause before the page's own listeners: add ours first
  const firstListener = (Ctor, onMake) => new Proxy(Ctor, {
    construct(target, args, nt) { const o = Reflect.construct(target, args, nt); onMake(o); return o; },
  });
  const replies = new WeakMap();
  // A socket may also push on its own (tickers, presence): a message that looks like the pushes seen while
  // nothing was awaited (same start, same length class) is not taken for the reply.
  const pushes = new WeakMap();
  const shape = (d) => (typeof d === 'string' ? d.slice(0, 12) + '|' + (d.length > 64 ? 'long' : d.length) : 'binary');
  const onReply = (target) => (e) => {
    const q = replies.get(target);
    let seen = pushes.get(target);
    if (!seen) pushes.set(target, (seen = new Set()));
    const s = shape(e.data);
    const x = q && q.length && !seen.has(s) ? q.shift() : null;
    if (x) { enter(x.c); done(x.w); return; }
    if (!q || !q.length) { if (seen.size > 50) seen.clear(); seen.add(s); }
    enter(null);
  };
  const expect = (target, kind, c) => {
    const w = track(kind, c);
    let q = replies.get(target);
    if (!q) replies.set(target, (q = []));
    const x = { w, c };
    q.push(x);
    oSetTimeout.call(W, () => { const i = q.indexOf(x); if (i >= 0) q.splice(i, 1); done(w); }, REPLY_MS);
  };
  if (W.WebSocket) {
    const WP = W.WebSocket.prototype, oWsSend = WP.send;
    W.WebSocket = firstListener(W.WebSocket, (ws) => oAdd.call(ws, 'message', onReply(ws)));
    WP.send = native(function send(...a) {
      const c = g.ctx;
      if (c && this.readyState === 1) expect(this, 'websocket reply', c);
      return oWsSend.apply(this, a);
    }, oWsSend);
  }
  if (OMC && MP) {
    const peer = new WeakMap();
    W.MessageChannel = firstListener(OMC, (ch) => {
      peer.set(ch.port1, ch.port2);
      peer.set(ch.port2, ch.port1);
      oAdd.call(ch.port1, 'message', onReply(ch.port1));
      oAdd.call(ch.port2, 'message', onReply(ch.port2));
    });
    MP.postMessage = native(function postMessage(...a) {
      const c = g.ctx, to = peer.get(this);
      if (c && to) expect(to, 'message', c);
      return oPost.apply(this, a);
    }, oPost);
  }

  // ---- the wait
  const titleNow = () => { try { const t = document.title; return typeof t === 'string' ? t : ''; } catch (e) { return ''; } };
  g.settle = (since, ms, navSeen) => new Promise((resolve) => {
    const newDoc = boot.t >= since;
    const counting = () => { for (const w of g.pending) if (w.t >= since) return true; return false; };
    const createdAfter = (mark) => {
      for (let i = g.seen.length - 1; i >= 0 && g.seen[i].seq > mark; i--) if (g.seen[i].t >= since) return true;
      return false;
    };
    const ready = () => (newDoc ? document.readyState === 'complete' : document.readyState !== 'loading');
    const navStarted = () => g.navAt >= since && g.navAt > navSeen && !(g.navEvent && g.navEvent.defaultPrevented);
    let framed = false, finished = false;
    const finish = (state) => {
      if (finished) return;
      finished = true;
      g.waiters.delete(check);
      oClearTimeout.call(W, cap);
      const waited = {};
      for (const w of g.seen) if (w.t >= since) waited[w.kind] = (waited[w.kind] || 0) + 1;
      if (newDoc) waited['document load'] = 1;
      // The title as the settle ends: the observation's tab list takes it from here (one round trip less per step).
      resolve({ state, waited, navAt: g.navAt, popupAt: g.popupAt, pending: [...g.pending].filter((w) => w.t >= since).map((w) => w.kind), title: titleNow() });
    };
    function check() {
      if (finished) return;
      if (navStarted()) return finish('navigation');
      if (!ready() || counting()) { framed = false; return; }
      if (framed) return;
      // Nothing waits for a frame: the capture's own frame shows everything done so far.
      if (!asked.size) return finish('done');
      framed = true;
      const mark = g.created;
      let fired = false;
      // One frame: an already-running rAF loop applies what the action asked for before our callback runs.
      const after = () => {
        if (fired) return;
        fired = true;
        if (!framed || finished) return;
        framed = false;
        if (navStarted()) return finish('navigation');
        if (ready() && !counting() && !createdAfter(mark)) finish('done');
        else check();
      };
      if (oRaf) oRaf.call(W, after);
      oSetTimeout.call(W, after, 100);
    }
    const cap = oSetTimeout.call(W, () => finish('cap'), Math.max(0, ms));
    g.waiters.add(check);
    // A form submission runs as a task after the input event: let two tasks run before the first look.
    oSetTimeout.call(W, () => oSetTimeout.call(W, check, 0), 0);
  });
})();`;
