"""What a language model reads in Lost in the Middle's tasks, and how its answer is scored: the domain that the
Lost in the Middle stage (`posbias.litm`) and the audit's reader batteries (`posbias.audit`) share.

One idea per module:

- `prompts`: the authors' prompt templates, byte for byte;
- `variants`: the prompt variants a config names (default, query-aware, random order, ...);
- `matching`: DPR's answer matcher (`has_answer`), which decides which retrieved passages are distractors;
- `qa_data`: the authors' multi-document QA files (reader, documents as their code sees them);
- `qa_builder`: the QA data at each gold position (and the oracle, closed-book and random-order inputs);
- `synthetic_qa`: NQ-shaped retrieval records from the embedded synthetic world (the offline stand-in);
- `kv`: the key-value retrieval data (seeded generator, the authors' files, moving the target);
- `predict`: examples into `posbias.llm` requests and completions into prediction records (authors' layout);
- `metric`: the authors' QA metric (`best_subspan_em`) and KV accuracy, quirks included;
- `attention_mitigations`: reader mitigations that change a local model's attention (found-in-the-middle
  calibration, Ms-PoE, attention sorting), for the audit's mitigation table.

Which of the authors' quirks each module replicates or fixes is said in its docstring (spec `litm.md` §6).
"""
