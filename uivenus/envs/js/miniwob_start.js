// Starts a seeded MiniWoB++ episode: seeds Math.seedrandom, sets the data mode and time limit, starts the episode,
// and disarms the start cover, which returns when the episode ends (a click on it must not start a second one).
({seed, maxMs, mode}) => {
  Math.seedrandom(seed);
  if (mode !== null) core.setDataMode(mode);
  if (maxMs !== null) core.EPISODE_MAX_TIME = maxMs;
  core.startEpisodeReal();
  core.cover_div.onclick = null;  // the cover returns when the episode ends; a click on it must not restart
  window.__uivenusEpisode = true;  // gone if the document is replaced (a link followed, a form reloading it)
}
