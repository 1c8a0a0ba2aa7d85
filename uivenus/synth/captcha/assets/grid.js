// Grid selection: tiles that toggle on click; Verify passes when exactly the tiles with an X are selected.
CaptchaKit.define("grid", (kit) => {
  const cfg = kit.cfg, rng = kit.rng;
  const [w, h] = cfg.canvas;
  const n = cfg.size, gap = cfg.gap, cell = cfg.cell;
  const pic = kit.canvas(w, h);
  const ctx = pic.ctx;
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, w, h);
  const origin = (i) => [gap + (i % n) * (cell + gap), gap + Math.floor(i / n) * (cell + gap)];
  cfg.cells.forEach((c, i) => {
    const [x, y] = origin(i);
    ctx.save();
    ctx.beginPath();
    ctx.rect(x, y, cell, cell);
    ctx.clip();
    ctx.fillStyle = kit.pastel();
    ctx.fillRect(x, y, cell, cell);
    ctx.translate(x, y);
    kit.noise(ctx, cell, cell, cfg.noise * 0.5, false);
    ctx.translate(-x, -y);
    const r = cell * rng.range(0.3, 0.38) * (1 - 0.1 * cfg.distortion);
    const jx = rng.range(-1, 1) * cell * 0.12 * cfg.distortion, jy = rng.range(-1, 1) * cell * 0.12 * cfg.distortion;
    kit.shape(ctx, c.shape, x + cell / 2 + jx, y + cell / 2 + jy, r, c.rot, {fill: kit.darkColour()});
    ctx.restore();
  });
  const marks = kit.canvas(w, h);
  const chosen = new Set();
  const redraw = () => {
    const m = marks.ctx;
    m.clearRect(0, 0, w, h);
    for (const i of chosen) {
      const [x, y] = origin(i);
      m.fillStyle = "rgba(26, 102, 210, 0.28)";
      m.fillRect(x, y, cell, cell);
      m.strokeStyle = "#1a66d2";
      m.lineWidth = 4;
      m.strokeRect(x + 2, y + 2, cell - 4, cell - 4);
      m.fillStyle = "#1a66d2";
      m.beginPath();
      m.arc(x + 14, y + 14, 10, 0, 2 * Math.PI);
      m.fill();
      m.strokeStyle = "#fff";
      m.lineWidth = 2.5;
      m.beginPath();
      m.moveTo(x + 9, y + 14);
      m.lineTo(x + 13, y + 18);
      m.lineTo(x + 19, y + 10);
      m.stroke();
    }
  };
  kit.onStageClick((x, y) => {
    const col = Math.floor((x - gap / 2) / (cell + gap)), row = Math.floor((y - gap / 2) / (cell + gap));
    if (col < 0 || row < 0 || col >= n || row >= n) return;
    const i = row * n + col;
    if (chosen.has(i)) chosen.delete(i); else chosen.add(i);
    kit.record("toggle", {cell: i, selected: chosen.has(i)});
    redraw();
  });
  kit.onSubmit(() => {
    const picked = [...chosen].sort((a, b) => a - b);
    const want = cfg.answer.slice().sort((a, b) => a - b);
    const same = picked.length === want.length && picked.every((v, k) => v === want[k]);
    kit.finish(same, same ? "exactly the right tiles" : `selected tiles ${JSON.stringify(picked)}`);
  });
});
