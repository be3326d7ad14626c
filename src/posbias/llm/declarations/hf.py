"""Local Hugging Face weights (`posbias.llm.backends.hf`)."""

from posbias.llm.declaration import BackendDeclaration

_LOCAL = "local Hugging Face weights (a directory or offline:SmolLM2-135M-Instruct)"

BACKENDS = (
    BackendDeclaration("hf_causal", "posbias.llm.backends.hf:HFCausal", f"{_LOCAL}, a causal model", local=True),
    BackendDeclaration("hf_seq2seq", "posbias.llm.backends.hf:HFSeq2Seq", f"{_LOCAL}, an encoder-decoder model",
                       local=True),
)
