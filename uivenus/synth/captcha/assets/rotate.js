// Rotate to upright: the knob turns the picture (full travel = 360 degrees); released within tolerance it passes.
CaptchaKit.define("rotate", (kit) => {
  const cfg = kit.cfg;
  const [w, h] = cfg.canvas;
  const d = cfg.diameter, left = (w - d) / 2, top = (h - d) / 2;
  const back = kit.canvas(w, h);
  kit.paper(back.ctx, w, h);
  back.ctx.strokeStyle = "rgba(40, 60, 90, 0.35)";
  back.ctx.lineWidth = 3;
  back.ctx.beginPath();
  back.ctx.arc(w / 2, h / 2, d / 2 + 6, 0, 2 * Math.PI);
  back.ctx.stroke();
  const disc = kit.canvas(d, d, kit.stage, left, top);
  disc.ctx.save();
  disc.ctx.beginPath();
  disc.ctx.arc(d / 2, d / 2, d / 2, 0, 2 * Math.PI);
  disc.ctx.clip();
  kit.landscape(disc.ctx, d, d);
  kit.noise(disc.ctx, d, d, cfg.noise * 0.35, false);
  disc.ctx.restore();
  disc.el.style.borderRadius = "50%";
  const turn = (angle) => { disc.el.style.transform = `rotate(${cfg.theta + angle}deg)`; };
  turn(0);
  const angleOf = (dx) => (dx / cfg.travel) * 360;
  kit.slider(
    (dx) => turn(angleOf(dx)),
    (dx) => {
      const error = ((((cfg.theta + angleOf(dx)) % 360) + 540) % 360) - 180;
      kit.record("rotate", {error: error});
      kit.finish(Math.abs(error) <= cfg.tolerance, `picture ${error.toFixed(1)} degrees from upright`);
    },
  );
});
