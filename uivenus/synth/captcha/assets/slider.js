// Slider puzzle: a piece cut from the picture rides the knob; released within tolerance of its gap it passes.
CaptchaKit.define("slider", (kit) => {
  const cfg = kit.cfg;
  const [w, h] = cfg.canvas;
  const s = cfg.size, q = s * 0.17, [gx, gy] = cfg.gap;
  const outline = (ctx, x, y) => {
    ctx.beginPath();
    ctx.moveTo(x, y);
    ctx.lineTo(x + s * 0.33, y);
    ctx.arc(x + s / 2, y, q, Math.PI, 0, false);
    ctx.lineTo(x + s, y);
    ctx.lineTo(x + s, y + s * 0.33);
    ctx.arc(x + s, y + s / 2, q, -Math.PI / 2, Math.PI / 2, false);
    ctx.lineTo(x + s, y + s);
    ctx.lineTo(x, y + s);
    ctx.closePath();
  };
  const picture = kit.canvas(w, h);
  kit.landscape(picture.ctx, w, h);
  const source = document.createElement("canvas");  // the untouched picture, for cutting the piece
  source.width = picture.el.width;
  source.height = picture.el.height;
  source.getContext("2d").drawImage(picture.el, 0, 0);
  const ctx = picture.ctx;
  for (const [dx, dy] of cfg.decoys) {
    outline(ctx, dx, dy);
    ctx.fillStyle = "rgba(0, 0, 0, 0.2)";
    ctx.fill();
    ctx.strokeStyle = "rgba(255, 255, 255, 0.45)";
    ctx.lineWidth = 1;
    ctx.stroke();
  }
  outline(ctx, gx, gy);
  ctx.fillStyle = "rgba(0, 0, 0, 0.5)";
  ctx.fill();
  ctx.strokeStyle = "rgba(255, 255, 255, 0.85)";
  ctx.lineWidth = 1.5;
  ctx.stroke();
  kit.noise(ctx, w, h, cfg.noise * 0.45, false);

  const pad = 3, pw = s + q + 2 * pad, ph = s + q + 2 * pad;
  const piece = kit.canvas(pw, ph, kit.stage, cfg.start_x - pad, gy - q - pad);
  const pctx = piece.ctx;
  pctx.save();
  outline(pctx, pad, q + pad);
  pctx.clip();
  pctx.drawImage(source, (gx - pad) * picture.dpr, (gy - q - pad) * picture.dpr, pw * picture.dpr, ph * picture.dpr,
                 0, 0, pw, ph);
  pctx.restore();
  outline(pctx, pad, q + pad);
  pctx.strokeStyle = "rgba(255, 255, 255, 0.95)";
  pctx.lineWidth = 2;
  pctx.stroke();
  piece.el.style.filter = "drop-shadow(0 0 3px rgba(0,0,0,0.6))";

  kit.slider(
    (dx) => { piece.el.style.left = cfg.start_x + dx - pad + "px"; },
    (dx) => {
      const offset = cfg.start_x + dx - gx;
      kit.record("slide", {offset: offset});
      kit.finish(Math.abs(offset) <= cfg.tolerance, `piece ${offset.toFixed(1)}px from the gap`);
    },
  );
});
