// Drag to match: a piece that must be dropped on the outline of the same shape, among distractor outlines.
CaptchaKit.define("drag_match", (kit) => {
  const cfg = kit.cfg;
  const [w, h] = cfg.canvas;
  const pic = kit.canvas(w, h);
  const ctx = pic.ctx;
  kit.paper(ctx, w, h);
  kit.noise(ctx, w, h, cfg.noise * 0.5, false);
  ctx.fillStyle = "rgba(255, 255, 255, 0.55)";
  ctx.fillRect(0, 0, cfg.tray_width, h);
  ctx.strokeStyle = "rgba(60, 70, 90, 0.35)";
  ctx.beginPath();
  ctx.moveTo(cfg.tray_width, 0);
  ctx.lineTo(cfg.tray_width, h);
  ctx.stroke();
  for (const o of cfg.outlines) {
    kit.shape(ctx, o.shape, o.x, o.y, cfg.r, o.rot, {stroke: "rgba(30, 40, 60, 0.85)", width: 2.5, dash: [6, 4],
                                                    fill: "rgba(255, 255, 255, 0.35)"});
  }
  const p = cfg.piece, size = 2 * cfg.r + 8;
  const piece = kit.canvas(size, size, kit.stage, p.x - size / 2, p.y - size / 2);
  kit.shape(piece.ctx, p.shape, size / 2, size / 2, cfg.r, p.rot,
            {fill: kit.brightColour(), stroke: "rgba(20, 20, 30, 0.85)", width: 1.5});
  piece.el.style.cursor = "grab";
  piece.el.style.filter = "drop-shadow(0 2px 3px rgba(0,0,0,0.35))";
  const clampX = (x) => Math.max(cfg.r, Math.min(w - cfg.r, x)), clampY = (y) => Math.max(cfg.r, Math.min(h - cfg.r, y));
  const place = (dx, dy) => [clampX(p.x + dx), clampY(p.y + dy)];
  kit.draggable(piece.el, (dx, dy) => {
    const [x, y] = place(dx, dy);
    piece.el.style.left = x - size / 2 + "px";
    piece.el.style.top = y - size / 2 + "px";
  }, (dx, dy) => {
    const [x, y] = place(dx, dy);
    const [tx, ty] = cfg.target;
    const distance = Math.hypot(x - tx, y - ty);
    kit.record("drop", {x: x, y: y});
    kit.finish(distance <= cfg.tolerance, `dropped ${distance.toFixed(1)}px from the matching outline`);
  });
});
