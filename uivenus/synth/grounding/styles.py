"""Platform looks (macOS-, Windows-, iOS-like and web), themes and screen sizes.

One shared stylesheet draws every component from CSS variables; each platform adds its own rules under
`.os-<name>` and its own palettes, fonts and sizes. Every length is in rem, so a theme scales a whole
screen (density, 4K display scaling, tiny training screens) by setting one root font size, while CSS
pixels stay image pixels (device scale factor 1). Fonts are Debian packages (fonts-dejavu, fonts-liberation,
fonts-urw-base35), each stack ending in DejaVu so a missing family degrades to the same face everywhere.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

Size = tuple[int, int]


@dataclass(frozen=True)
class PlatformStyle:
    name: str
    fonts: tuple[str, ...]  # CSS font stacks to choose from
    base_px: float  # root font size at regular density
    accents: tuple[str, ...]
    sizes: tuple[tuple[Size, float], ...]  # (width, height), weight
    light: Mapping[str, str]  # CSS variables
    dark: Mapping[str, str]
    radius_rem: tuple[float, float]  # control corner radius range
    css: str  # rules under .os-<name>


@dataclass(frozen=True)
class Theme:
    """Everything about a screen's look that is drawn at random once per sample."""

    platform: str
    dark: bool
    accent: str
    font: str
    root_px: float
    radius_rem: float
    wallpaper: str
    density: str

    def variables(self) -> str:
        style = STYLES[self.platform]
        palette = dict(style.dark if self.dark else style.light)
        palette.update({"--accent": self.accent, "--font": self.font, "--radius": f"{self.radius_rem:.3f}rem",
                        "--wallpaper": self.wallpaper})
        return ";".join(f"{k}:{v}" for k, v in palette.items())


_MONO = '"DejaVu Sans Mono", "Liberation Mono", monospace'
_HELVETICA = '"Nimbus Sans", "Liberation Sans", "DejaVu Sans", sans-serif'
_ARIAL = '"Liberation Sans", "DejaVu Sans", sans-serif'
_DEJAVU = '"DejaVu Sans", sans-serif'
_CONDENSED = '"DejaVu Sans Condensed", "DejaVu Sans", sans-serif'
_SERIF = '"Liberation Serif", "DejaVu Serif", serif'
_GOTHIC = '"URW Gothic", "DejaVu Sans", sans-serif'

#: Density name -> root font multiplier.
DENSITIES: Mapping[str, float] = {"compact": 0.9, "regular": 1.0, "comfortable": 1.12}

BASE_CSS = f"""
*{{box-sizing:border-box;margin:0;padding:0;animation:none!important;transition:none!important;
  caret-color:transparent}}
html,body{{width:100%;height:100%;overflow:hidden}}
body{{font-family:var(--font);color:var(--fg);background:var(--bg);line-height:1.3;
  -webkit-font-smoothing:antialiased}}
button,input,textarea,select{{font:inherit;color:inherit}}
button{{background:none;border:none;cursor:default}}
.screen{{position:relative;width:100vw;height:100vh;overflow:hidden;background:var(--bg)}}
.desk{{background:var(--wallpaper)}}
.ic{{width:1.15em;height:1.15em;flex:none;display:block}}
.ic.big{{width:2.2em;height:2.2em}}
.row{{display:flex;align-items:center}}
.col{{display:flex;flex-direction:column}}
.grow{{flex:1 1 auto;min-width:0}}
.muted{{color:var(--muted)}}
.small{{font-size:.85em}}
.bold{{font-weight:700}}
.mono{{font-family:{_MONO}}}
.h1{{font-size:1.9em;font-weight:700;letter-spacing:-.01em}}
.h2{{font-size:1.35em;font-weight:700}}
.h3{{font-size:1.08em;font-weight:600}}
.window{{position:absolute;display:flex;flex-direction:column;background:var(--bg);overflow:hidden;
  box-shadow:0 .8rem 2.4rem rgba(0,0,0,.35),0 0 0 1px var(--border)}}
.titlebar{{display:flex;align-items:center;flex:none;gap:.6rem;padding:0 .8rem;height:2.4rem;background:var(--chrome);
  border-bottom:1px solid var(--border)}}
.toolbar{{display:flex;align-items:center;gap:.35rem;padding:.4rem .7rem;flex:none;background:var(--chrome);
  border-bottom:1px solid var(--border)}}
.toolbar .title{{font-weight:700;font-size:1.05em;margin-right:.6rem;white-space:nowrap}}
.sep{{width:1px;align-self:stretch;margin:.2rem .3rem;background:var(--border)}}
.spacer{{flex:1 1 auto}}
.iconbtn{{display:inline-flex;align-items:center;justify-content:center;padding:.38rem;border-radius:var(--radius);
  color:var(--icon)}}
.iconbtn.boxed{{border:1px solid var(--border);background:var(--surface)}}
.btn{{display:inline-flex;align-items:center;gap:.4rem;white-space:nowrap;padding:.38rem .9rem;
  border-radius:var(--radius);
  background:var(--btn);border:1px solid var(--btn-border);color:var(--fg);box-shadow:var(--btn-shadow)}}
.btn.primary{{background:var(--accent);border-color:var(--accent);color:#fff}}
.btn.danger{{background:var(--danger);border-color:var(--danger);color:#fff}}
.btn.ghost{{background:transparent;border-color:transparent;box-shadow:none;color:var(--accent)}}
.btn.big{{padding:.7rem 1.4rem;font-size:1.05em}}
.field{{display:block;width:100%;padding:.45rem .6rem;border:1px solid var(--field-border);
  border-radius:var(--radius);
  background:var(--field);outline:none}}
.field::placeholder{{color:var(--placeholder)}}
textarea.field{{height:4.6rem;resize:none}}
.search{{display:flex;align-items:center;gap:.4rem;padding:.32rem .6rem;border-radius:var(--radius);
  background:var(--field);border:1px solid var(--field-border);color:var(--muted)}}
.search input{{border:none;background:transparent;outline:none;width:100%;min-width:4rem}}
.search input::placeholder{{color:var(--placeholder)}}
.lbl{{display:inline-block;font-weight:600;font-size:.92em;margin-bottom:.3rem}}
.fgroup{{margin-bottom:.85rem}}
.check{{display:inline-flex;align-items:center;gap:.5rem}}
.box{{width:1.05rem;height:1.05rem;border:1.5px solid var(--field-border);border-radius:.22rem;
  background:var(--field);
  display:inline-flex;align-items:center;justify-content:center;color:#fff;flex:none}}
.box.on{{background:var(--accent);border-color:var(--accent)}}
.box .ic{{width:.8rem;height:.8rem}}
.toggle{{display:inline-block;position:relative;width:2.6rem;height:1.5rem;border-radius:1rem;
  background:var(--track);flex:none}}
.toggle::after{{content:"";position:absolute;top:.15rem;left:.15rem;width:1.2rem;height:1.2rem;border-radius:50%;
  background:#fff;box-shadow:0 1px 2px rgba(0,0,0,.3)}}
.toggle.on{{background:var(--on)}}
.toggle.on::after{{left:1.25rem}}
.sidebar{{display:flex;flex-direction:column;gap:.1rem;padding:.6rem .5rem;background:var(--side);flex:none;
  border-right:1px solid var(--border);overflow:hidden}}
.sb-head{{font-size:.78em;font-weight:700;color:var(--muted);padding:.7rem .55rem .3rem;
  text-transform:var(--head-case)}}
.sb-item{{display:flex;align-items:center;gap:.55rem;padding:.34rem .55rem;border-radius:var(--radius);
  white-space:nowrap}}
.sb-item .ic{{color:var(--accent)}}
.sb-item.active{{background:var(--selection);color:var(--selection-fg)}}
.sb-item.active .ic{{color:inherit}}
.main{{flex:1 1 auto;min-width:0;min-height:0;display:flex;flex-direction:column;overflow:hidden;
  background:var(--surface)}}
.pad{{padding:1rem 1.2rem}}
.body{{flex:1 1 auto;display:flex;min-height:0;overflow:hidden}}
table.tbl{{border-collapse:collapse;width:100%;font-size:.95em}}
.tbl th{{text-align:left;font-weight:600;color:var(--muted);padding:.35rem .7rem;
  border-bottom:1px solid var(--border);
  white-space:nowrap;font-size:.9em}}
.tbl td{{padding:.38rem .7rem;white-space:nowrap;border-bottom:1px solid var(--grid)}}
.tbl tr.zebra td{{background:var(--zebra)}}
.tbl tr.sel td{{background:var(--selection);color:var(--selection-fg)}}
.cell{{display:inline-flex;align-items:center;gap:.45rem}}
.list .item{{display:flex;align-items:center;gap:.75rem;padding:.6rem .9rem;border-bottom:1px solid var(--grid)}}
.list .item.sel{{background:var(--selection);color:var(--selection-fg)}}
.avatar{{width:2.3rem;height:2.3rem;border-radius:50%;display:inline-flex;align-items:center;justify-content:center;
  color:#fff;font-weight:700;font-size:.9em;flex:none}}
.t1{{font-weight:600;white-space:nowrap}}
.t2{{color:var(--muted);font-size:.9em;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}}
.cards{{display:grid;gap:1rem}}
.card{{background:var(--card);border:1px solid var(--border);border-radius:calc(var(--radius) * 1.6);overflow:hidden;
  display:flex;flex-direction:column}}
.card .art{{height:7rem;display:flex;align-items:center;justify-content:center;color:rgba(255,255,255,.9)}}
.card .cb{{padding:.7rem .8rem;display:flex;flex-direction:column;gap:.3rem}}
.card .actions{{display:flex;align-items:center;gap:.3rem;margin-top:.3rem}}
.price{{font-weight:700;font-size:1.1em}}
.tabs{{display:flex;gap:.2rem;border-bottom:1px solid var(--border);padding:0 .8rem;flex:none}}
.tab{{padding:.55rem .85rem;border-bottom:2px solid transparent;color:var(--muted);white-space:nowrap}}
.tab.active{{color:var(--accent);border-bottom-color:var(--accent);font-weight:600}}
.seg{{display:inline-flex;padding:.15rem;border-radius:calc(var(--radius) + .1rem);background:var(--track);gap:.1rem}}
.seg .tab{{border:none;padding:.25rem .9rem;border-radius:var(--radius);color:var(--fg)}}
.seg .tab.active{{background:var(--surface);box-shadow:0 1px 2px rgba(0,0,0,.2);color:var(--fg)}}
.statusbar{{display:flex;align-items:center;gap:1.2rem;padding:.25rem .8rem;font-size:.82em;color:var(--muted);
  background:var(--chrome);border-top:1px solid var(--border);flex:none;white-space:nowrap}}
.backdrop{{position:absolute;inset:0;background:var(--backdrop);display:flex;align-items:center;
  justify-content:center;z-index:50}}
.dialog{{background:var(--surface);border-radius:calc(var(--radius) * 2);box-shadow:0 1.2rem 3rem rgba(0,0,0,.45);
  padding:1.2rem 1.3rem;width:min(26rem,88vw);display:flex;flex-direction:column;gap:.7rem;
  border:1px solid var(--border)}}
.dialog .acts{{display:flex;justify-content:flex-end;gap:.5rem;margin-top:.4rem}}
.menu{{position:absolute;z-index:40;min-width:13rem;background:var(--menu);border:1px solid var(--border);
  border-radius:calc(var(--radius) + .1rem);box-shadow:0 .6rem 1.6rem rgba(0,0,0,.3);padding:.3rem;display:flex;
  flex-direction:column}}
.menu .mi{{display:flex;align-items:center;gap:1.5rem;padding:.28rem .7rem;
  border-radius:calc(var(--radius) - .1rem);white-space:nowrap}}
.menu .mi.hl{{background:var(--accent);color:#fff}}
.menu .mi.hl .muted,.menu .mi.hl .kbd{{color:rgba(255,255,255,.85)}}
.menu .msep{{height:1px;background:var(--border);margin:.25rem .4rem}}
.menu .kbd{{margin-left:auto;color:var(--muted)}}
.anchor{{position:relative}}
.badge{{display:inline-block;padding:.08rem .5rem;border-radius:1rem;font-size:.8em;font-weight:600;
  background:var(--chip);color:var(--chip-fg);white-space:nowrap}}
.chip{{display:inline-flex;align-items:center;gap:.3rem;padding:.25rem .75rem;border-radius:1rem;
  border:1px solid var(--border);
  background:var(--surface);white-space:nowrap}}
.chip.on{{background:var(--accent);color:#fff;border-color:var(--accent)}}
.apps{{display:grid;justify-items:center;gap:1.1rem .6rem}}
.app{{display:flex;flex-direction:column;align-items:center;gap:.35rem;width:5rem}}
.tile{{width:3.6rem;height:3.6rem;border-radius:.95rem;display:flex;align-items:center;justify-content:center;
  color:#fff}}
.tile .ic{{width:1.9rem;height:1.9rem}}
.app .name{{font-size:.72em;white-space:nowrap;color:var(--fg)}}
.keyboard{{background:var(--kb);padding:.4rem .2rem 1.4rem;display:flex;flex-direction:column;gap:.55rem;flex:none}}
.kb-row{{display:flex;justify-content:center;gap:.3rem}}
.key{{min-width:0;height:2.6rem;border-radius:.35rem;background:var(--key);box-shadow:0 1px 0 rgba(0,0,0,.35);
  display:flex;align-items:center;justify-content:center;font-size:1.15em;flex:1 1 0;max-width:2.4rem}}
.key.wide{{max-width:none;flex:1.6 1 0;font-size:.85em;background:var(--key2)}}
.key.space{{max-width:none;flex:5 1 0;font-size:.85em}}
.stat{{background:var(--card);border:1px solid var(--border);border-radius:calc(var(--radius) * 1.5);
  padding:.8rem 1rem}}
.stat .v{{font-size:1.6em;font-weight:700;margin-top:.2rem}}
.bars{{display:flex;align-items:flex-end;gap:.35rem;height:6rem;padding-top:.5rem}}
.bars span{{flex:1;background:var(--accent);opacity:.8;border-radius:.2rem .2rem 0 0}}
.crumbs{{display:flex;align-items:center;gap:.3rem;white-space:nowrap}}
.link{{color:var(--accent);white-space:nowrap}}
.banner{{position:absolute;left:0;right:0;bottom:0;z-index:45;background:var(--menu);
  border-top:1px solid var(--border);
  box-shadow:0 -.4rem 1.2rem rgba(0,0,0,.15);padding:.9rem 1.2rem;display:flex;align-items:center;gap:1rem;
  flex-wrap:wrap}}
.toast{{position:absolute;z-index:45;right:1.2rem;bottom:1.2rem;background:#222;color:#fff;
  border-radius:var(--radius);
  padding:.7rem 1rem;display:flex;align-items:center;gap:.9rem;box-shadow:0 .5rem 1.4rem rgba(0,0,0,.35)}}
.toast .btn.ghost{{color:#8ab4ff}}
.tooltip{{position:absolute;z-index:42;top:calc(100% + .35rem);left:50%;transform:translateX(-50%);background:#1d1d1f;
  color:#fff;font-size:.78em;padding:.22rem .5rem;border-radius:.3rem;white-space:nowrap}}
.hero{{padding:2.6rem 2rem;display:flex;flex-direction:column;gap:.9rem;align-items:flex-start}}
.para{{color:var(--muted);max-width:40rem;line-height:1.5}}
.pager{{display:flex;gap:.3rem;align-items:center}}
.pager .pg{{min-width:2rem;padding:.3rem .55rem;text-align:center;border-radius:var(--radius);
  border:1px solid var(--border)}}
.pager .pg.on{{background:var(--accent);color:#fff;border-color:var(--accent)}}
.editor{{padding:1.4rem 1.8rem;line-height:1.6;display:flex;flex-direction:column;gap:.8rem}}
.player{{display:flex;flex-direction:column;align-items:center;gap:1rem;padding:1.4rem}}
.cover{{width:14rem;height:14rem;border-radius:.8rem;display:flex;align-items:center;justify-content:center;
  color:rgba(255,255,255,.9)}}
.cover .ic{{width:5rem;height:5rem}}
.group{{margin:0 1rem 1.4rem;background:var(--card);border-radius:.65rem;overflow:hidden}}
.gh{{margin:0 2rem .35rem;font-size:.8em;color:var(--muted);text-transform:uppercase}}
.cellrow{{display:flex;align-items:center;gap:.75rem;padding:.55rem 1rem;min-height:2.75rem;position:relative}}
.cellrow + .cellrow::before{{content:"";position:absolute;top:0;left:3.2rem;right:0;height:1px;
  background:var(--grid)}}
.cellrow.plain + .cellrow.plain::before{{left:1rem}}
.ibox{{width:1.8rem;height:1.8rem;border-radius:.42rem;display:flex;align-items:center;justify-content:center;
  color:#fff;flex:none}}
.ibox .ic{{width:1.1rem;height:1.1rem}}
.chev{{color:var(--placeholder);width:.95rem;height:.95rem}}
.progress{{width:100%;height:.3rem;border-radius:.2rem;background:var(--track);position:relative}}
.progress span{{position:absolute;left:0;top:0;bottom:0;border-radius:.2rem;background:var(--fg)}}
"""

_MACOS_CSS = """
.os-macos .mbar{position:absolute;top:0;left:0;right:0;height:1.75rem;display:flex;align-items:center;gap:.2rem;
  padding:0 .7rem;background:var(--mbar);color:var(--mbar-fg);backdrop-filter:blur(20px);z-index:30;font-size:.98em}
.os-macos .mbar .mt{padding:.1rem .55rem;border-radius:.3rem;white-space:nowrap}
.os-macos .mbar .mt.app{font-weight:700}
.os-macos .mbar .mt.open{background:rgba(127,127,127,.35)}
.os-macos .mbar .iconbtn{color:var(--mbar-fg);padding:.15rem .3rem}
.os-macos .window{border-radius:.75rem}
.os-macos .titlebar{border-bottom:none;height:auto;padding:.7rem .9rem .55rem}
.os-macos .traffic{display:flex;gap:.5rem}
.os-macos .traffic button{width:.82rem;height:.82rem;border-radius:50%;padding:0}
.os-macos .toolbar{border-bottom:1px solid var(--border);padding:.45rem .9rem}
.os-macos .sidebar{background:var(--side);border-right:1px solid var(--border);padding-top:.3rem}
.os-macos .sb-item.active{background:var(--side-sel);color:var(--fg)}
.os-macos .sb-item.active .ic{color:var(--accent)}
.os-macos .dock{position:absolute;bottom:.4rem;left:50%;transform:translateX(-50%);display:flex;gap:.35rem;
  padding:.35rem;
  border-radius:1.2rem;background:var(--dock);border:1px solid rgba(255,255,255,.25);z-index:35}
.os-macos .dock .tile{width:3.3rem;height:3.3rem;border-radius:.8rem}
.os-macos .dialog{border-radius:.9rem;width:min(22rem,88vw);text-align:center;align-items:center}
.os-macos .dialog .acts{justify-content:stretch;width:100%}
.os-macos .dialog .acts .btn{flex:1;justify-content:center}
.os-macos .tbl th{border-right:1px solid var(--grid)}
"""

_WINDOWS_CSS = """
.os-windows .window{border-radius:.5rem}
.os-windows .titlebar{height:2.3rem;padding:0 0 0 .8rem;border-bottom:none;background:var(--chrome);font-size:.9em}
.os-windows .winctl{display:flex;align-self:stretch}
.os-windows .winctl button{width:3.3rem;display:flex;align-items:center;justify-content:center;color:var(--fg)}
.os-windows .winctl .ic{width:.85rem;height:.85rem}
.os-windows .menubar{display:flex;gap:.1rem;padding:.15rem .4rem;background:var(--chrome);flex:none}
.os-windows .menubar .mt{padding:.22rem .6rem;border-radius:.3rem;white-space:nowrap}
.os-windows .menubar .mt.open{background:var(--selection)}
.os-windows .taskbar{position:absolute;left:0;right:0;bottom:0;height:3.4rem;display:flex;align-items:center;
  background:var(--taskbar);border-top:1px solid var(--border);z-index:35;padding:0 .6rem}
.os-windows .taskbar .center{position:absolute;left:50%;transform:translateX(-50%);display:flex;gap:.3rem;
  align-items:center}
.os-windows .taskbar .iconbtn{padding:.55rem}
.os-windows .taskbar .iconbtn .ic{width:1.5rem;height:1.5rem}
.os-windows .taskbar .tray{margin-left:auto;display:flex;align-items:center;gap:.2rem;font-size:.85em}
.os-windows .taskbar .clock{text-align:right;line-height:1.25;padding:0 .4rem;white-space:nowrap}
.os-windows .taskbar .search{border-radius:1.2rem;width:13rem}
.os-windows .btn{border-bottom-color:var(--btn-border-bottom)}
.os-windows .sidebar{background:var(--side);border-right:none}
.os-windows .sb-item.active{background:var(--side-sel);color:var(--fg);box-shadow:inset 3px 0 0 var(--accent)}
.os-windows .sb-item .ic{color:var(--icon)}
.os-windows .address{display:flex;align-items:center;gap:.4rem;padding:.35rem .7rem;background:var(--chrome);
  flex:none}
.os-windows .address .crumbs{flex:1;padding:.3rem .6rem;border:1px solid var(--border);
  border-radius:var(--radius);background:var(--field)}
.os-windows .dialog{border-radius:.55rem;padding:0;gap:0;overflow:hidden}
.os-windows .dialog .dhead{padding:1.2rem 1.4rem .4rem}
.os-windows .dialog .dtext{padding:0 1.4rem 1.2rem}
.os-windows .dialog .acts{background:var(--chrome);padding:1rem 1.4rem;margin:0;border-top:1px solid var(--border)}
.os-windows .dialog .acts .btn{flex:1;justify-content:center}
.os-windows .card{border-radius:.4rem}
.os-windows .setcard{display:flex;align-items:center;gap:1rem;padding:.85rem 1rem;background:var(--card);
  border:1px solid var(--border);border-radius:.35rem;margin-bottom:.25rem}
"""

_IOS_CSS = """
.os-ios .statusrow{display:flex;align-items:center;justify-content:space-between;padding:.75rem 1.6rem .35rem;
  font-weight:600;font-size:.95em;flex:none}
.os-ios .statusrow .row{gap:.3rem}
.os-ios .statusrow .ic{width:1.05rem;height:1.05rem}
.os-ios .navbar{display:flex;align-items:center;padding:.3rem .6rem;min-height:2.6rem;flex:none}
.os-ios .navbar .ntitle{position:absolute;left:50%;transform:translateX(-50%);font-weight:600;white-space:nowrap}
.os-ios .navbar .btn.ghost{padding:.3rem .4rem;font-size:1em}
.os-ios .navbar .iconbtn{color:var(--accent)}
.os-ios .large{font-size:2em;font-weight:700;padding:.1rem 1rem .5rem;flex:none}
.os-ios .search{margin:0 1rem .6rem;border:none;background:var(--fill);border-radius:.6rem;padding:.45rem .55rem}
.os-ios .tabbar{display:flex;justify-content:space-around;padding:.35rem 0 1.5rem;background:var(--bar);
  border-top:1px solid var(--border);flex:none}
.os-ios .tbi{display:flex;flex-direction:column;align-items:center;gap:.15rem;font-size:.65em;
  color:var(--placeholder);
  min-width:3.5rem}
.os-ios .tbi .ic{width:1.65rem;height:1.65rem}
.os-ios .tbi.active{color:var(--accent)}
.os-ios .homebar{position:absolute;bottom:.5rem;left:50%;transform:translateX(-50%);width:8.5rem;height:.3rem;
  border-radius:.2rem;background:var(--fg);z-index:60}
.os-ios .dialog{width:min(17rem,80vw);text-align:center;padding:1.1rem 0 0;gap:.3rem;border-radius:.9rem;
  background:var(--menu);border:none}
.os-ios .dialog .dtext{padding:0 1rem .8rem;font-size:.85em}
.os-ios .dialog .acts{margin:0;gap:0;border-top:1px solid var(--border)}
.os-ios .dialog .acts .btn{flex:1;justify-content:center;border:none;border-radius:0;background:none;
  color:var(--accent);
  box-shadow:none;padding:.7rem}
.os-ios .dialog .acts .btn + .btn{border-left:1px solid var(--border);font-weight:600}
.os-ios .sheet{position:absolute;left:.5rem;right:.5rem;bottom:1.6rem;z-index:55;display:flex;
  flex-direction:column;gap:.5rem}
.os-ios .sheet .group{margin:0;background:var(--menu)}
.os-ios .sheet .cellrow{justify-content:center;color:var(--accent);font-size:1.1em}
.os-ios .btn{border-radius:.6rem;box-shadow:none}
.os-ios .field{border:none;background:var(--card);padding:.65rem .8rem;border-radius:.6rem}
.os-ios .list{background:var(--card)}
.os-ios .dock{margin:0 .7rem 1.6rem;padding:.8rem .6rem;border-radius:1.8rem;background:rgba(255,255,255,.28);
  display:flex;justify-content:space-around}
.os-ios .dots{display:flex;justify-content:center;gap:.45rem;margin:auto 0 .8rem}
.os-ios .dots span{width:.45rem;height:.45rem;border-radius:50%;background:rgba(255,255,255,.5)}
.os-ios .dots span.on{background:#fff}
.os-ios .app .name{color:#fff;text-shadow:0 1px 2px rgba(0,0,0,.4)}
"""

_WEB_CSS = """
.os-web .hdr{display:flex;align-items:center;gap:1.2rem;padding:.75rem 1.6rem;background:var(--chrome);
  border-bottom:1px solid var(--border);flex:none}
.os-web .brand{display:flex;align-items:center;gap:.45rem;font-weight:800;font-size:1.2em;white-space:nowrap;
  font-family:var(--brand-font)}
.os-web .brand .logo{width:1.9rem;height:1.9rem;border-radius:.45rem;background:var(--accent);color:#fff;display:flex;
  align-items:center;justify-content:center}
.os-web .nav{display:flex;gap:1.1rem}
.os-web .nav a{white-space:nowrap;color:var(--fg);text-decoration:none}
.os-web .nav a.active{color:var(--accent);font-weight:600}
.os-web .footer{display:flex;gap:1.4rem;padding:1rem 1.6rem;border-top:1px solid var(--border);color:var(--muted);
  font-size:.85em;flex:none;flex-wrap:wrap}
.os-web .footer a{color:var(--muted);text-decoration:none;white-space:nowrap}
.os-web .page{flex:1 1 auto;display:flex;min-height:0;overflow:hidden}
.os-web .wrap{max-width:72rem;margin:0 auto;width:100%}
.os-web .panel{background:var(--card);border:1px solid var(--border);border-radius:calc(var(--radius) * 1.5);
  padding:1.4rem}
.os-web .filters{width:14rem;padding:1.2rem;display:flex;flex-direction:column;gap:.55rem;flex:none;
  border-right:1px solid var(--border)}
.os-web a{color:var(--accent);text-decoration:none}
"""

_WALLPAPERS = (
    "linear-gradient(135deg,#1e3c72,#2a5298)", "linear-gradient(160deg,#ff9a8b,#ff6a88 55%,#ff99ac)",
    "linear-gradient(120deg,#84fab0,#8fd3f4)", "radial-gradient(circle at 30% 20%,#7f53ac,#647dee 60%,#1f1c2c)",
    "linear-gradient(180deg,#0f2027,#203a43,#2c5364)", "linear-gradient(135deg,#f6d365,#fda085)",
    "radial-gradient(circle at 70% 80%,#43cea2,#185a9d)", "linear-gradient(200deg,#c471f5,#fa71cd)",
    "linear-gradient(160deg,#0b486b,#f56217)", "radial-gradient(ellipse at bottom,#1b2735,#090a0f)",
)

_LIGHT_COMMON = {
    "--fg": "#1d1d1f", "--muted": "#6e6e73", "--placeholder": "#a1a1a6", "--border": "#d9d9de", "--grid": "#ececf0",
    "--zebra": "#f7f7fa", "--danger": "#e0352b", "--track": "#e3e3e8", "--chip": "#eef0f4", "--chip-fg": "#3a3a40",
    "--backdrop": "rgba(0,0,0,.28)", "--selection-fg": "#fff", "--head-case": "none",
}
_DARK_COMMON = {
    "--fg": "#f2f2f7", "--muted": "#a1a1aa", "--placeholder": "#6f6f78", "--border": "#3a3a40", "--grid": "#2e2e33",
    "--zebra": "#242428", "--danger": "#ff453a", "--track": "#3a3a3f", "--chip": "#34343a", "--chip-fg": "#e8e8ee",
    "--backdrop": "rgba(0,0,0,.5)", "--selection-fg": "#fff", "--head-case": "none",
}


def _palette(common: Mapping[str, str], **values: str) -> dict[str, str]:
    return {**common, **{f"--{k.replace('_', '-')}": v for k, v in values.items()}}


STYLES: Mapping[str, PlatformStyle] = {s.name: s for s in (
    PlatformStyle(
        "macos", (_HELVETICA, _ARIAL, _DEJAVU), 13.0,
        ("#007aff", "#0a84ff", "#af52de", "#ff2d55", "#34c759", "#ff9500", "#5856d6"),
        (((1280, 800), 3), ((1440, 900), 3), ((1512, 982), 1), ((1920, 1080), 2), ((2560, 1440), .4),
         ((3840, 2160), .15)),
        _palette(_LIGHT_COMMON, bg="#ffffff", surface="#ffffff", chrome="#f6f6f6", side="#ebebf0", card="#ffffff",
                 menu="#f4f4f6", field="#ffffff", field_border="#cfcfd4", btn="#ffffff", btn_border="#d0d0d5",
                 btn_shadow="0 1px 1px rgba(0,0,0,.08)", icon="#5f5f66", selection="#0a6cff", side_sel="#dcdce2",
                 on="#34c759", mbar="rgba(246,246,248,.86)", mbar_fg="#1d1d1f", dock="rgba(246,246,248,.55)",
                 kb="#d1d3d9", key="#fff", key2="#aeb3be", fill="#e9e9ee", bar="#f7f7f7"),
        _palette(_DARK_COMMON, bg="#1e1e1e", surface="#1e1e1e", chrome="#2b2b2d", side="#262628", card="#2a2a2c",
                 menu="#2c2c2e", field="#1c1c1e", field_border="#48484c", btn="#3a3a3c", btn_border="#4a4a4e",
                 btn_shadow="none", icon="#c7c7cc", selection="#0a64d8", side_sel="#3a3a3e", on="#30d158",
                 mbar="rgba(30,30,32,.82)", mbar_fg="#f2f2f7", dock="rgba(40,40,44,.6)",
                 kb="#2b2b2d", key="#5a5a5e", key2="#3e3e42", fill="#2c2c2e", bar="#1c1c1e"),
        (.3, .45), _MACOS_CSS),
    PlatformStyle(
        "windows", (_DEJAVU, _ARIAL, _CONDENSED), 13.5,
        ("#0067c0", "#005fb8", "#c42b1c", "#107c10", "#8764b8", "#ca5010", "#0078d4"),
        (((1366, 768), 2), ((1280, 800), 1), ((1536, 864), 2), ((1920, 1080), 3), ((2560, 1440), .4),
         ((3840, 2160), .15)),
        _palette(_LIGHT_COMMON, bg="#f9f9f9", surface="#ffffff", chrome="#f3f3f3", side="#f3f3f3", card="#fbfbfb",
                 menu="#f9f9f9", field="#ffffff", field_border="#c8c8c8", btn="#fbfbfb", btn_border="#d6d6d6",
                 btn_border_bottom="#b8b8b8", btn_shadow="none", icon="#3b3b3b", selection="#cce4f7",
                 side_sel="#e6e6e6",
                 on="#0067c0", taskbar="rgba(238,238,240,.95)", kb="#e5e5e5", key="#fff", key2="#d4d4d4",
                 fill="#eeeeee", bar="#f3f3f3"),
        _palette(_DARK_COMMON, bg="#202020", surface="#272727", chrome="#202020", side="#202020", card="#2b2b2b",
                 menu="#2c2c2c", field="#2d2d2d", field_border="#4a4a4a", btn="#2d2d2d", btn_border="#3c3c3c",
                 btn_border_bottom="#555", btn_shadow="none", icon="#e0e0e0", selection="#0e4775", side_sel="#2d2d2d",
                 on="#4cc2ff", taskbar="rgba(28,28,28,.95)", kb="#2b2b2b", key="#3b3b3b", key2="#2f2f2f",
                 fill="#2d2d2d", bar="#202020"),
        (.2, .3), _WINDOWS_CSS),
    PlatformStyle(
        "ios", (_HELVETICA, _ARIAL, _DEJAVU), 16.0,
        ("#007aff", "#0a84ff", "#ff2d55", "#34c759", "#ff9500", "#5856d6", "#af52de"),
        (((390, 844), 3), ((393, 852), 2), ((375, 667), 1), ((430, 932), 1.5), ((414, 896), 1),
         ((820, 1180), .5), ((1024, 1366), .25)),
        _palette(_LIGHT_COMMON, bg="#f2f2f7", surface="#f2f2f7", chrome="#f7f7f7", side="#f2f2f7", card="#ffffff",
                 menu="rgba(242,242,247,.97)", field="#ffffff", field_border="#c6c6c8", btn="#e5e5ea",
                 btn_border="#e5e5ea", btn_shadow="none", icon="#007aff", selection="#d1d1d6", side_sel="#d1d1d6",
                 on="#34c759", kb="#d1d3d9", key="#fff", key2="#abb0bb", fill="#e3e3e8", bar="rgba(249,249,249,.96)"),
        _palette(_DARK_COMMON, bg="#000000", surface="#000000", chrome="#1c1c1e", side="#000000", card="#1c1c1e",
                 menu="rgba(44,44,46,.97)", field="#1c1c1e", field_border="#38383a", btn="#2c2c2e",
                 btn_border="#2c2c2e", btn_shadow="none", icon="#0a84ff", selection="#3a3a3c", side_sel="#3a3a3c",
                 on="#30d158", kb="#2c2c2e", key="#6b6b6e", key2="#464649", fill="#1c1c1e", bar="rgba(22,22,24,.96)"),
        (.45, .7), _IOS_CSS),
    PlatformStyle(
        "web", (_DEJAVU, _ARIAL, _HELVETICA, _GOTHIC, _SERIF, _CONDENSED), 15.0,
        ("#2563eb", "#7c3aed", "#db2777", "#059669", "#ea580c", "#0891b2", "#4f46e5", "#dc2626", "#0f766e"),
        (((390, 844), 1.2), ((412, 915), 1.2), ((768, 1024), .6), ((1280, 800), 2), ((1440, 900), 2),
         ((1920, 1080), 2), ((1366, 768), 1), ((3840, 2160), .12)),
        _palette(_LIGHT_COMMON, bg="#f8fafc", surface="#ffffff", chrome="#ffffff", side="#f1f5f9", card="#ffffff",
                 menu="#ffffff", field="#ffffff", field_border="#cbd5e1", btn="#ffffff", btn_border="#cbd5e1",
                 btn_shadow="0 1px 2px rgba(0,0,0,.06)", icon="#475569", selection="#2563eb", side_sel="#e2e8f0",
                 on="#2563eb", kb="#d1d5db", key="#fff", key2="#9ca3af", fill="#f1f5f9", bar="#ffffff",
                 brand_font=_GOTHIC),
        _palette(_DARK_COMMON, bg="#0b1120", surface="#0f172a", chrome="#111827", side="#0f172a", card="#1e293b",
                 menu="#1e293b", field="#0f172a", field_border="#334155", btn="#1e293b", btn_border="#334155",
                 btn_shadow="none", icon="#cbd5e1", selection="#3b82f6", side_sel="#1e293b", on="#3b82f6",
                 kb="#1f2937", key="#374151", key2="#1f2937", fill="#1e293b", bar="#111827", brand_font=_GOTHIC),
        (.2, .75), _WEB_CSS),
)}

PLATFORMS: tuple[str, ...] = tuple(STYLES)
#: Tiny screens for training small models (simple mode).
SIMPLE_SIZES: tuple[Size, ...] = ((224, 224), (256, 256), (320, 240), (336, 336), (384, 384), (448, 448),
                                  (448, 336), (360, 448))


def pick_size(rng: random.Random, platform: str, sizes: tuple[Size, ...] | None) -> Size:
    """A screen size: uniform over `sizes` when given, else the platform's weighted list."""
    if sizes:
        return tuple(rng.choice(sizes))  # type: ignore[return-value]
    options = STYLES[platform].sizes
    return rng.choices([s for s, _ in options], weights=[w for _, w in options])[0]


def display_scale(rng: random.Random, size: Size) -> float:
    """OS display scaling in CSS px: big desktops render UI larger (as 150-200% scaling would)."""
    width, _ = size
    if width >= 3000:
        return rng.choice((1.5, 1.75, 2.0))
    if width >= 2400:
        return rng.choice((1.0, 1.25))
    return 1.0


def pick_theme(rng: random.Random, platform: str, size: Size, simple: bool) -> Theme:
    style = STYLES[platform]
    density = rng.choices(list(DENSITIES), weights=(1, 2, 1))[0]
    lo, hi = style.radius_rem
    return Theme(
        platform=platform,
        dark=rng.random() < 0.35,
        accent=rng.choice(style.accents),
        font=rng.choice(style.fonts),
        root_px=round(min(size) / rng.uniform(15, 20) if simple  # tiny screens: few, big elements
                      else style.base_px * DENSITIES[density] * display_scale(rng, size), 2),
        radius_rem=round(rng.uniform(lo, hi), 3),
        wallpaper=rng.choice(_WALLPAPERS),
        density=density,
    )


def document(theme: Theme, body: str) -> str:
    """The whole page: stylesheet, theme variables, root font size, body."""
    css = BASE_CSS + STYLES[theme.platform].css
    classes = f"os-{theme.platform} {'dark' if theme.dark else 'light'}"
    return (f'<!doctype html><html style="font-size:{theme.root_px:g}px"><head><meta charset="utf-8">'
            f"<style>:root{{{theme.variables()}}}{css}</style></head>"
            f'<body class="{classes}">{body}</body></html>')
