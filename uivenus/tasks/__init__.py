"""Task generation (SYSTEM.md part 4): capability catalog -> task synthesis -> validity gate, with feedback.

- `catalog`: per app, functions with parameter domains, UI states seen, constraints learned; versioned JSON.
  `catalog_diff` compares two (`diff_catalogs`); `catalog_docs` builds one from a feature description
  (`docs/<app>.md`); `naming`, `vocabularies` and `unsafe` hold the words both builders share.
- `explore`: breadth-first exploration of a sandbox app through a browser env, inferring its functions.
- `functions`: reference moves and state models of catalog functions, so synthesised tasks run and check.
- `spec`: `SynthTask` (a TaskSpec with the calls it exercises, phrasings, provenance) and its JSONL files.
- `synthesis`: `TemplateSynthesizer` (offline) and `LLMSynthesizer` (any policy) behind `Synthesizer`.
- `gate`: `Gate` rejects duplicates, infeasible, unsafe and non-executable tasks with reasons, and turns what
  a failed run's page said into constraints.
"""
