// Settings: connections, notifications, display, language, device name and reset; all values live in app.data.
"use strict";
(function () {
  const DEFAULTS = {
    wifi: true, bluetooth: false, airplane: false, notifications: true,
    brightness: 70, dark_mode: false, language: "en", device_name: "Venus Phone",
  };
  const LANGUAGES = [
    ["en", "English"], ["es", "Español"], ["fr", "Français"], ["de", "Deutsch"],
    ["pt", "Português"], ["it", "Italiano"], ["nl", "Nederlands"],
  ];
  const SECTIONS = {
    connections: "Connections", notifications: "Notifications", display: "Display",
    language: "Language", about: "About device", system: "System",
  };
  const { $, $$, ready, h, clearable, syncClearButtons, confirmDialog, hashRoutes } = widgets;
  let app = null;
  const onOff = (v) => (v ? "On" : "Off");
  const languageName = (code) => (LANGUAGES.find(([c]) => c === code) || [code, code])[1];

  // The open section lives in the URL hash (not in app.data), so PressBack walks back through screens;
  // the in-app back button shows the list at once (pushing it when this entry is not the app's own).
  const nav = hashRoutes(() => render(app));

  function render(a) {
    app = a;
    const d = a.data;
    const phone = a.layout === "phone";
    let r = SECTIONS[nav.route] ? nav.route : "";
    if (!phone && !r) r = "connections";
    document.documentElement.classList.toggle("dark", !!d.dark_mode);
    document.body.dataset.screen = r ? "panel" : "home";
    $("#title").textContent = phone && r ? SECTIONS[r] : "Settings";
    $$(".panel").forEach((p) => p.classList.toggle("hidden", p.dataset.panel !== r));
    $$(".section-link").forEach((l) => l.classList.toggle("active", l.dataset.route === r));

    $$("[role=switch]").forEach((s) => s.setAttribute("aria-checked", String(!!d[s.dataset.key])));
    $("#wifi-sub").textContent = d.wifi ? "Connected to HomeNet-5G" : "Off";
    $("#bluetooth-sub").textContent = d.bluetooth ? "On · visible as “" + d.device_name + "”" : "Off";
    $("#sub-connections").textContent = d.airplane ? "Airplane mode" : "Wi-Fi " + onOff(d.wifi).toLowerCase() + " · Bluetooth " + onOff(d.bluetooth).toLowerCase();
    $("#sub-notifications").textContent = d.notifications ? "Allowed" : "Blocked";
    $("#sub-display").textContent = "Brightness " + d.brightness + "% · Dark mode " + onOff(d.dark_mode).toLowerCase();
    $("#sub-language").textContent = languageName(d.language);
    $("#sub-about").textContent = d.device_name;

    $("#brightness").value = d.brightness;
    $("#brightness-value").textContent = d.brightness + "%";

    $("#language").value = d.language;
    $$("#language-list .radio-row").forEach((row) => row.setAttribute("aria-checked", String(row.dataset.code === d.language)));

    const name = $("#device-name");
    if (document.activeElement !== name) name.value = d.device_name;
    updateDeviceNameForm();
  }

  function updateDeviceNameForm() {
    const value = $("#device-name").value.trim();
    $("#save-device-name").disabled = !value || value === app.data.device_name;
    syncClearButtons();
  }

  function toggle(key) {
    const d = app.data;
    d[key] = !d[key];
    if (key === "airplane" && d.airplane) { d.wifi = false; d.bluetooth = false; }
    app.save();
  }

  function build() {
    const select = $("#language");
    const list = $("#language-list");
    for (const [code, name] of LANGUAGES) {
      select.add(new Option(name, code));
      list.appendChild(h("button", { class: "radio-row", role: "radio", "data-code": code, "data-testid": "lang-" + code,
        onclick: () => { app.data.language = code; app.save(); } }, name));
    }
    select.addEventListener("change", () => { app.data.language = select.value; app.save(); });
    $$(".section-link").forEach((l) => l.addEventListener("click", () => nav.go(l.dataset.route)));
    $("[data-testid=back]").addEventListener("click", () => nav.back("", false));
    $$("[role=switch]").forEach((s) => s.addEventListener("click", () => toggle(s.dataset.key)));

    const slider = $("#brightness");
    slider.addEventListener("input", () => { $("#brightness-value").textContent = slider.value + "%"; });
    slider.addEventListener("change", () => { app.data.brightness = Number(slider.value); app.save(); });

    const name = $("#device-name");
    name.addEventListener("input", () => { $("#device-name-status").textContent = ""; updateDeviceNameForm(); });
    name.addEventListener("keydown", (e) => { if (e.key === "Enter" && !$("#save-device-name").disabled) saveDeviceName(); });
    clearable(name, updateDeviceNameForm);
    $("#save-device-name").addEventListener("click", saveDeviceName);

    const ask = confirmDialog({
      title: "Reset all settings?", ok: "Reset",
      text: "Wi-Fi, Bluetooth, display, language and the device name go back to their defaults. This cannot be undone.",
      onOk: () => {
        app.data = JSON.parse(JSON.stringify(DEFAULTS));
        $("#device-name").value = DEFAULTS.device_name;
        app.save();
      },
    });
    $("#reset-settings").addEventListener("click", () => ask());
  }

  function saveDeviceName() {
    app.data.device_name = $("#device-name").value.trim();
    $("#device-name-status").textContent = "Saved";
    app.save();
  }

  ready(build);
  app = uivenusApp("settings", DEFAULTS, render);
})();
