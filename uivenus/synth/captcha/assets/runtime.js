// The runtime every CAPTCHA page shares: seeded drawing helpers, pointer helpers and the grader contract.
// The grader's verdict is window.captchaResult = {done, passed, reason}; window.uivenus.state() returns it as
// {captcha: ..., family, id, events} so BrowserEnv.state()["app_state"] shows it. The first attempt counts:
// once done, the challenge ignores further input. Geometry comes from the JSON config (computed in Python);
// this file only decides how things look, with a PRNG seeded from the config.
(function () {
  "use strict";
  const cfg = JSON.parse(document.getElementById("captcha-config").textContent);

  function mulberry32(seed) {
    let a = seed >>> 0;
    return function () {
      a = (a + 0x6D2B79F5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const next = mulberry32(cfg.seed);
  const rng = {
    next: next,
    range: (lo, hi) => lo + (hi - lo) * next(),
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
  };

  const result = {done: false, passed: false, reason: "not attempted"};
  window.captchaResult = result;
  const events = [];
  const card = document.getElementById("captcha");
  const stage = document.getElementById("cap-stage");

  function record(type, data) {
    events.push(Object.assign({type: type}, data || {}));
  }

  function finish(passed, reason) {
    if (result.done) return;
    result.done = true;
    result.passed = !!passed;
    result.reason = reason;
    record("graded", {passed: result.passed, reason: reason});
    card.classList.add(passed ? "cap-passed" : "cap-failed");
    const banner = document.getElementById("cap-result");
    banner.textContent = passed ? "\u2713 Verified" : "\u2717 Verification failed";
    banner.hidden = false;
    const input = document.getElementById("cap-input");
    if (input) input.disabled = true;
  }

  window.uivenus = {
    app: "captcha",
    state: () => ({captcha: Object.assign({}, result), family: cfg.family, id: cfg.id, events: events.slice()}),
  };

  // --- drawing ------------------------------------------------------------------------------------

  function canvas(w, h, parent, left, top) {
    const el = document.createElement("canvas");
    const dpr = window.devicePixelRatio || 1;
    el.width = Math.round(w * dpr);
    el.height = Math.round(h * dpr);
    el.style.width = w + "px";
    el.style.height = h + "px";
    el.style.left = (left || 0) + "px";
    el.style.top = (top || 0) + "px";
    (parent || stage).appendChild(el);
    const ctx = el.getContext("2d");
    ctx.scale(dpr, dpr);
    return {el: el, ctx: ctx, w: w, h: h, dpr: dpr};
  }

  const hsl = (h, s, l, a) => `hsla(${Math.round(h)}, ${Math.round(s)}%, ${Math.round(l)}%, ${a === undefined ? 1 : a})`;
  const darkColour = () => hsl(rng.range(0, 360), rng.range(45, 80), rng.range(18, 38));
  const brightColour = () => hsl(rng.range(0, 360), rng.range(55, 85), rng.range(42, 56));
  const pastel = () => hsl(rng.range(0, 360), rng.range(30, 60), rng.range(86, 94));

  function paper(ctx, w, h) {
    const g = ctx.createLinearGradient(0, 0, w, h);
    const hue = rng.range(0, 360);
    g.addColorStop(0, hsl(hue, 35, 93));
    g.addColorStop(1, hsl(hue + rng.range(40, 120), 35, 86));
    ctx.fillStyle = g;
    ctx.fillRect(0, 0, w, h);
  }

  // Dots and crossing curves; amount in 0..1 scales both.
  function noise(ctx, w, h, amount, strong) {
    const dots = Math.round(amount * 420);
    for (let i = 0; i < dots; i++) {
      ctx.fillStyle = hsl(rng.range(0, 360), 50, rng.range(25, 70), rng.range(0.25, 0.7));
      ctx.fillRect(rng.range(0, w), rng.range(0, h), rng.range(1, 2.6), rng.range(1, 2.6));
    }
    const lines = Math.round(amount * 6);
    for (let i = 0; i < lines; i++) {
      ctx.strokeStyle = strong ? darkColour() : hsl(rng.range(0, 360), 45, rng.range(35, 65), 0.8);
      ctx.lineWidth = rng.range(1, 1 + 2.2 * amount);
      ctx.beginPath();
      ctx.moveTo(0, rng.range(0, h));
      ctx.bezierCurveTo(rng.range(0, w), rng.range(-h / 2, 1.5 * h), rng.range(0, w), rng.range(-h / 2, 1.5 * h),
                        w, rng.range(0, h));
      ctx.stroke();
    }
  }

  // A little landscape (sky, sun, hills, trees, a house): the picture the slider and rotation challenges cut up.
  function landscape(ctx, w, h) {
    const hue = rng.range(190, 225);
    const sky = ctx.createLinearGradient(0, 0, 0, h * 0.7);
    sky.addColorStop(0, hsl(hue, 70, 58));
    sky.addColorStop(1, hsl(hue - 10, 60, 84));
    ctx.fillStyle = sky;
    ctx.fillRect(0, 0, w, h);
    ctx.fillStyle = hsl(rng.range(40, 55), 95, 62);
    ctx.beginPath();
    ctx.arc(rng.range(w * 0.15, w * 0.85), rng.range(h * 0.12, h * 0.3), rng.range(12, 20), 0, 2 * Math.PI);
    ctx.fill();
    for (let c = 0; c < 3; c++) {
      const cx = rng.range(0, w), cy = rng.range(h * 0.08, h * 0.35);
      ctx.fillStyle = "rgba(255,255,255,0.85)";
      for (let k = 0; k < 3; k++) {
        ctx.beginPath();
        ctx.ellipse(cx + k * 14, cy + (k === 1 ? -6 : 0), 16, 10, 0, 0, 2 * Math.PI);
        ctx.fill();
      }
    }
    for (let layer = 0; layer < 3; layer++) {
      const base = h * (0.5 + layer * 0.13);
      ctx.fillStyle = hsl(rng.range(90, 140), rng.range(30, 55), 48 - layer * 9);
      ctx.beginPath();
      ctx.moveTo(0, h);
      for (let x = 0; x <= w + 30; x += 30) ctx.lineTo(x, base - rng.range(0, h * 0.18));
      ctx.lineTo(w, h);
      ctx.fill();
    }
    const houseX = rng.range(w * 0.1, w * 0.7), houseY = h * 0.72, s = Math.min(w, h) * 0.16;
    ctx.fillStyle = hsl(rng.range(0, 40), 50, 80);
    ctx.fillRect(houseX, houseY - s, s * 1.2, s);
    ctx.fillStyle = hsl(rng.range(0, 20), 65, 40);
    ctx.beginPath();
    ctx.moveTo(houseX - 6, houseY - s);
    ctx.lineTo(houseX + s * 0.6, houseY - s * 1.7);
    ctx.lineTo(houseX + s * 1.2 + 6, houseY - s);
    ctx.fill();
    ctx.fillStyle = "#5b4636";
    ctx.fillRect(houseX + s * 0.45, houseY - s * 0.55, s * 0.3, s * 0.55);
    for (let t = 0; t < 4; t++) {
      const tx = rng.range(0, w), ty = rng.range(h * 0.72, h * 0.95), th = rng.range(18, 32);
      ctx.fillStyle = "#6b4f34";
      ctx.fillRect(tx - 2, ty - th * 0.3, 4, th * 0.3);
      ctx.fillStyle = hsl(rng.range(100, 150), 55, 28);
      ctx.beginPath();
      ctx.moveTo(tx - th * 0.35, ty - th * 0.3);
      ctx.lineTo(tx, ty - th * 1.2);
      ctx.lineTo(tx + th * 0.35, ty - th * 0.3);
      ctx.fill();
    }
  }

  // Shape paths centred on the origin with radius r (the names Python uses in configs).
  function star(ctx, r, n) {
    for (let i = 0; i < 2 * n; i++) {
      const a = -Math.PI / 2 + (i * Math.PI) / n, rr = i % 2 ? r * 0.45 : r;
      ctx.lineTo(rr * Math.cos(a), rr * Math.sin(a));
    }
    ctx.closePath();
  }
  function polygon(ctx, r, n) {
    for (let i = 0; i < n; i++) {
      const a = -Math.PI / 2 + (2 * i * Math.PI) / n;
      ctx.lineTo(r * Math.cos(a), r * Math.sin(a));
    }
    ctx.closePath();
  }
  function bars(ctx, r, segments) {  // stroke-like glyphs drawn as thin filled bars
    const t = r * 0.24;
    for (const [x1, y1, x2, y2] of segments) {
      const len = Math.hypot(x2 - x1, y2 - y1), a = Math.atan2(y2 - y1, x2 - x1);
      ctx.save();
      ctx.translate(x1 * r, y1 * r);
      ctx.rotate(a);
      ctx.rect(-t / 2, -t / 2, len * r + t, t);
      ctx.restore();
    }
  }
  const SHAPES = {
    circle: (ctx, r) => ctx.arc(0, 0, r * 0.9, 0, 2 * Math.PI),
    ring: (ctx, r) => { ctx.arc(0, 0, r * 0.9, 0, 2 * Math.PI); ctx.moveTo(r * 0.5, 0); ctx.arc(0, 0, r * 0.5, 0, 2 * Math.PI, true); },
    square: (ctx, r) => ctx.rect(-r * 0.75, -r * 0.75, r * 1.5, r * 1.5),
    triangle: (ctx, r) => polygon(ctx, r, 3),
    star5: (ctx, r) => star(ctx, r, 5),
    star6: (ctx, r) => star(ctx, r, 6),
    poly5: (ctx, r) => polygon(ctx, r * 0.95, 5),
    poly6: (ctx, r) => polygon(ctx, r * 0.95, 6),
    heart: (ctx, r) => {
      ctx.moveTo(0, r * 0.85);
      ctx.bezierCurveTo(-r * 1.3, -r * 0.05, -r * 0.6, -r * 1.05, 0, -r * 0.4);
      ctx.bezierCurveTo(r * 0.6, -r * 1.05, r * 1.3, -r * 0.05, 0, r * 0.85);
      ctx.closePath();
    },
    moon: (ctx, r) => {
      ctx.arc(0, 0, r * 0.85, Math.PI * 0.3, Math.PI * 1.7);
      ctx.arc(r * 0.35, 0, r * 0.62, Math.PI * 1.55, Math.PI * 0.45, true);
      ctx.closePath();
    },
    bolt: (ctx, r) => {
      const p = [[0.15, -1], [-0.55, 0.1], [-0.05, 0.1], [-0.2, 1], [0.55, -0.15], [0.05, -0.15]];
      p.forEach(([x, y]) => ctx.lineTo(x * r, y * r));
      ctx.closePath();
    },
    arrow: (ctx, r) => {
      const p = [[0, -1], [0.7, -0.2], [0.25, -0.2], [0.25, 0.9], [-0.25, 0.9], [-0.25, -0.2], [-0.7, -0.2]];
      p.forEach(([x, y]) => ctx.lineTo(x * r, y * r));
      ctx.closePath();
    },
    xmark: (ctx, r) => bars(ctx, r, [[-0.65, -0.65, 0.65, 0.65], [0.65, -0.65, -0.65, 0.65]]),
    cross: (ctx, r) => bars(ctx, r, [[0, -0.8, 0, 0.8], [-0.8, 0, 0.8, 0]]),
    slash: (ctx, r) => bars(ctx, r, [[-0.6, 0.7, 0.6, -0.7]]),
    vee: (ctx, r) => bars(ctx, r, [[-0.6, -0.7, 0, 0.7], [0.6, -0.7, 0, 0.7]]),
    ell: (ctx, r) => bars(ctx, r, [[-0.45, -0.75, -0.45, 0.7], [-0.45, 0.7, 0.6, 0.7]]),
  };

  // Fill (and optionally outline) a named shape at (x, y), rotated by `rot` degrees.
  function shape(ctx, name, x, y, r, rot, style) {
    ctx.save();
    ctx.translate(x, y);
    ctx.rotate((rot * Math.PI) / 180);
    ctx.beginPath();
    SHAPES[name](ctx, r);
    if (style.fill) {
      ctx.fillStyle = style.fill;
      ctx.fill(name === "ring" ? "evenodd" : "nonzero");
    }
    if (style.stroke) {
      ctx.setLineDash(style.dash || []);
      ctx.lineWidth = style.width || 2;
      ctx.strokeStyle = style.stroke;
      ctx.stroke();
    }
    ctx.restore();
  }

  const OPERATORS = "+-\u00d7=";

  // Text warped by a vertical and a horizontal sine, each glyph in its own font, size, angle and colour.
  function distortedText(target, text, opts) {
    const {w, h, dpr} = target;
    const off = document.createElement("canvas");
    off.width = Math.round(w * dpr);
    off.height = Math.round(h * dpr);
    const ctx = off.getContext("2d");
    ctx.scale(dpr, dpr);
    const fonts = ["Georgia, 'DejaVu Serif', serif", "'Liberation Sans', Arial, sans-serif",
                   "'DejaVu Sans Mono', 'Courier New', monospace", "'Liberation Serif', 'Times New Roman', serif",
                   "'DejaVu Sans', Verdana, sans-serif"];
    const d = opts.distortion;
    const glyphs = [...text].map((ch) => ({
      ch: ch, font: `${rng.pick(["bold ", ""])}${Math.round(rng.range(42, 50) - 4 * d)}px ${rng.pick(fonts)}`,
      // operators barely tilt: a tilted plus would read as a times sign
      angle: rng.range(-1, 1) * (OPERATORS.includes(ch) ? 5 : 4 + 26 * d), dy: rng.range(-1, 1) * 8 * d,
      colour: darkColour(),
    }));
    const widths = glyphs.map((g) => { ctx.font = g.font; return ctx.measureText(g.ch).width; });
    const spacing = 1 - 0.1 * d;
    const total = widths.reduce((a, b) => a + b, 0) * spacing;
    const scale = Math.min(1, (w - 24) / total);
    let x = (w - total * scale) / 2;
    glyphs.forEach((g, i) => {
      ctx.save();
      ctx.translate(x + (widths[i] * scale) / 2, h / 2 + g.dy);
      ctx.rotate((g.angle * Math.PI) / 180);
      ctx.scale(scale, scale);
      ctx.font = g.font;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.fillStyle = g.colour;
      ctx.fillText(g.ch, 0, 0);
      ctx.restore();
      x += widths[i] * scale * spacing;
    });
    if (d > 0.6) {  // strike-through curves in the text's own colour
      for (let k = 0; k < 2; k++) {
        ctx.strokeStyle = glyphs[k % glyphs.length].colour;
        ctx.lineWidth = 2;
        ctx.beginPath();
        ctx.moveTo(8, h / 2 + rng.range(-14, 14));
        ctx.bezierCurveTo(w / 3, rng.range(0, h), (2 * w) / 3, rng.range(0, h), w - 8, h / 2 + rng.range(-14, 14));
        ctx.stroke();
      }
    }
    const out = target.ctx;
    const ampY = 1 + 5 * d, ampX = 3 * d, period = rng.range(70, 120), phase = rng.range(0, 2 * Math.PI);
    const strip = 2;
    const band = document.createElement("canvas");
    band.width = off.width;
    band.height = off.height;
    const bctx = band.getContext("2d");
    for (let sx = 0; sx < w; sx += strip) {  // vertical wave: shift columns
      const dy = ampY * Math.sin((2 * Math.PI * sx) / period + phase);
      bctx.drawImage(off, sx * dpr, 0, strip * dpr, off.height, sx * dpr, dy * dpr, strip * dpr, off.height);
    }
    for (let sy = 0; sy < h; sy += strip) {  // horizontal wave: shift rows
      const dx = ampX * Math.sin((2 * Math.PI * sy) / (period / 2) + phase);
      out.drawImage(band, 0, sy * dpr, band.width, strip * dpr, dx, sy, w, strip);
    }
  }

  // --- input ----------------------------------------------------------------------------------------

  function local(ev, el) {
    const r = el.getBoundingClientRect();
    return [ev.clientX - r.left, ev.clientY - r.top];
  }

  // Press on `el`, move, release: onMove(dx, dy) while moving, onEnd(dx, dy) once on release.
  function draggable(el, onMove, onEnd) {
    let start = null, last = [0, 0];
    el.addEventListener("pointerdown", (ev) => {
      if (result.done) return;
      ev.preventDefault();
      start = [ev.clientX, ev.clientY];
      last = [0, 0];
      el.setPointerCapture(ev.pointerId);
      record("press", {x: ev.clientX, y: ev.clientY});
    });
    el.addEventListener("pointermove", (ev) => {
      if (!start) return;
      last = [ev.clientX - start[0], ev.clientY - start[1]];
      onMove(last[0], last[1]);
    });
    const release = (ev) => {
      if (!start) return;
      if (ev.type === "pointerup") last = [ev.clientX - start[0], ev.clientY - start[1]];
      start = null;
      record("release", {dx: last[0], dy: last[1]});
      onMove(last[0], last[1]);
      onEnd(last[0], last[1]);
    };
    el.addEventListener("pointerup", release);
    el.addEventListener("pointercancel", release);
  }

  // A slider knob on its track: onMove(offset) with the offset clamped to [0, travel], onEnd(offset).
  function slider(onMove, onEnd) {
    const knob = document.getElementById("cap-knob"), fill = document.getElementById("cap-fill");
    const clamp = (dx) => Math.max(0, Math.min(cfg.travel, dx));
    const show = (dx) => {
      knob.style.left = cfg.knob_left + clamp(dx) + "px";
      fill.style.width = clamp(dx) + knob.offsetWidth + "px";
      onMove(clamp(dx));
    };
    draggable(knob, (dx) => show(dx), (dx) => onEnd(clamp(dx)));
  }

  // Clicks on a canvas-sized overlay, in canvas pixels.
  function onStageClick(handler) {
    stage.addEventListener("click", (ev) => {
      if (result.done) return;
      const [x, y] = local(ev, stage);
      record("click", {x: x, y: y});
      handler(x, y);
    });
  }

  function onSubmit(handler) {
    const button = document.getElementById("cap-submit");
    button.addEventListener("click", () => {
      if (result.done) return;
      record("submit");
      handler();
    });
  }

  const families = {};
  window.CaptchaKit = {
    cfg: cfg, rng: rng, stage: stage, record: record, finish: finish, done: () => result.done, canvas: canvas, paper: paper, noise: noise,
    landscape: landscape, shape: shape, distortedText: distortedText, darkColour: darkColour,
    brightColour: brightColour, pastel: pastel, hsl: hsl, local: local, draggable: draggable, slider: slider,
    onStageClick: onStageClick, onSubmit: onSubmit,
    define: (name, init) => { families[name] = init; },
    start: () => families[cfg.script](window.CaptchaKit),
  };
})();
