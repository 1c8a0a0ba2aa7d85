// Odd one out: shapes that agree but for one; the first click on the picture is the answer.
CaptchaKit.define("odd_one_out", (kit) => {
  const cfg = kit.cfg;
  const [w, h] = cfg.canvas;
  const pic = kit.canvas(w, h);
  const ctx = pic.ctx;
  kit.paper(ctx, w, h);
  kit.noise(ctx, w, h, cfg.noise * 0.6, false);
  const shared = kit.brightColour();
  for (const item of cfg.items) {
    kit.shape(ctx, item.shape, item.x, item.y, item.r, item.rot,
              {fill: cfg.one_colour ? shared : kit.brightColour(), stroke: "rgba(20, 20, 30, 0.75)", width: 1.5});
  }
  kit.noise(ctx, w, h, cfg.noise * 0.3, false);
  kit.onStageClick((x, y) => {
    const [ox, oy] = cfg.odd;
    const distance = Math.hypot(x - ox, y - oy);
    kit.finish(distance <= cfg.radius, distance <= cfg.radius ? "picked the odd one" : "picked a shape that is not the odd one");
  });
});
