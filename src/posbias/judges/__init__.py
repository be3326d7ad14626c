"""LLM judges and their position bias: the judgment record (`records`), Shi et al.'s metrics (`metrics`), the
"Judging the Judges" release read as records (`release`) and reproduced (`reproduction`), and the pairwise prompt a
live judge is asked (`prompts`). The audit's judge battery (`posbias.audit.judge_battery`) runs them."""
