// The page's own verdict on the episode, or null when the document is no longer the one the episode started in.
() => {
  if (window.__uivenusEpisode !== true) return null;
  const u = core.getUtterance();
  return {done: WOB_DONE_GLOBAL === true, raw_reward: WOB_RAW_REWARD_GLOBAL, reward: WOB_REWARD_GLOBAL,
          reason: WOB_REWARD_REASON == null ? null : String(WOB_REWARD_REASON),
          utterance: typeof u === "string" ? u : u.utterance};
}
