// Typed answers (distorted text, arithmetic): the string drawn warped over noise; graded on Verify or Enter.
CaptchaKit.define("typed", (kit) => {
  const cfg = kit.cfg;
  const [w, h] = cfg.canvas;
  const pic = kit.canvas(w, h);
  kit.paper(pic.ctx, w, h);
  kit.noise(pic.ctx, w, h, cfg.noise * 0.6, false);
  kit.distortedText(pic, cfg.text, {distortion: cfg.distortion});
  kit.noise(pic.ctx, w, h, cfg.noise * 0.35, cfg.noise > 0.6);
  const input = document.getElementById("cap-input");
  const normal = (s) => s.replace(/\s+/g, "").toUpperCase();
  const grade = () => {
    const typed = normal(input.value);
    if (!typed) return;  // an empty field is not an attempt
    kit.record("answer", {value: input.value});
    const passed = typed === normal(cfg.answer);
    kit.finish(passed, passed ? "correct answer" : `wrong answer ${JSON.stringify(input.value)}`);
  };
  kit.onSubmit(grade);
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !kit.done()) grade();
  });
});
