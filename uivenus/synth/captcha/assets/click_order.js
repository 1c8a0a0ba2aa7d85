// Click in order: characters or icons scattered on a busy picture; the clicks must hit the targets in order.
CaptchaKit.define("click_order", (kit) => {
  const cfg = kit.cfg, rng = kit.rng;
  const [w, h] = cfg.canvas;
  const pic = kit.canvas(w, h);
  const ctx = pic.ctx;
  kit.paper(ctx, w, h);
  kit.noise(ctx, w, h, cfg.noise * 0.7, false);
  for (const item of cfg.items) {
    const angle = rng.range(-1, 1) * (10 + 35 * cfg.distortion);
    if (item.label !== undefined) {
      ctx.save();
      ctx.translate(item.x, item.y);
      ctx.rotate((angle * Math.PI) / 180);
      ctx.font = `bold ${Math.round(rng.range(30, 36))}px ${rng.pick(["Georgia, serif", "'Liberation Sans', sans-serif", "'DejaVu Sans Mono', monospace"])}`;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.lineWidth = 4;
      ctx.strokeStyle = "rgba(255, 255, 255, 0.9)";
      ctx.strokeText(item.label, 0, 0);
      ctx.fillStyle = kit.darkColour();
      ctx.fillText(item.label, 0, 0);
      ctx.restore();
    } else {
      kit.shape(ctx, item.icon, item.x, item.y, 17, angle * 0.6,
                {fill: kit.brightColour(), stroke: "rgba(20, 20, 30, 0.8)", width: 1.5});
    }
  }
  kit.noise(ctx, w, h, cfg.noise * 0.25, false);
  const marks = kit.canvas(w, h);
  const clicks = [];
  kit.onStageClick((x, y) => {
    clicks.push([x, y]);
    const m = marks.ctx;
    m.fillStyle = "rgba(26, 102, 210, 0.9)";
    m.beginPath();
    m.arc(x, y, 10, 0, 2 * Math.PI);
    m.fill();
    m.fillStyle = "#fff";
    m.font = "bold 12px 'Liberation Sans', sans-serif";
    m.textAlign = "center";
    m.textBaseline = "middle";
    m.fillText(String(clicks.length), x, y + 0.5);
  });
  kit.onSubmit(() => {
    if (clicks.length !== cfg.targets.length) {
      kit.finish(false, `${clicks.length} clicks for ${cfg.targets.length} targets`);
      return;
    }
    const miss = cfg.targets.findIndex(([tx, ty], i) => Math.hypot(clicks[i][0] - tx, clicks[i][1] - ty) > cfg.radius);
    kit.finish(miss < 0, miss < 0 ? "all targets in order" : `click ${miss + 1} missed its target`);
  });
});
