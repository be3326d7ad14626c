"""An outside bi-encoder: a sentence-transformers model as it comes (its own modules pool and normalise, its own
similarity function scores), each side encoded with the model's own prompt for it; vectors are kept by text, so a
sweep's distractors, which recur at every position, are encoded once. With a `calibration`
(`posbias.scoring.embedder_calibration.Calibration`) every text is encoded with its attention calibrated."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from posbias.errors import InputError
from posbias.scoring.protocol import Scorer, tokens_in


class SentenceTransformerScorer(Scorer):
    """A sentence-transformers model as it comes: its modules pool and normalise, its own similarity scores."""

    def __init__(self, path: str, name: str | None = None, device: str = "auto", trust_remote_code: bool = False,
                 revision: str | None = None, max_length: int | None = None, batch_size: int = 32,
                 calibration=None):
        from sentence_transformers import SentenceTransformer

        from posbias.device import pick_device

        try:
            self.model = SentenceTransformer(str(path), device=str(pick_device(device)),
                                             trust_remote_code=trust_remote_code, revision=revision)
        except (OSError, ValueError) as err:
            raise InputError(f"cannot load {name or path!r} as a sentence-transformers model: "
                             f"{str(err).splitlines()[0]}") from None
        if max_length is not None:
            self.model.max_seq_length = min(max_length, self.model.max_seq_length)
        self.batch_size, self.calibration = batch_size, calibration
        self.window = self.model.max_seq_length - self.model.tokenizer.num_special_tokens_to_add(pair=False)
        # by side and text: a sweep's distractors recur at every position
        self._vectors: dict[tuple, np.ndarray] = {}

    def _encode(self, texts: Sequence[str], encode) -> np.ndarray:
        """Vectors of `texts` by `encode_query` or `encode_document`: each applies the model's own prompt for its
        side (E5's "query: ", a BGE instruction), when the model has one."""
        new = [text for text in dict.fromkeys(texts) if (encode.__name__, text) not in self._vectors]
        if new:
            options = dict(batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False)
            if self.calibration is None:
                vectors = encode(new, **options)
            else:
                from posbias.scoring.embedder_calibration import encode_calibrated

                vectors = encode_calibrated(self.model, self.calibration, encode, new, **options)
            self._vectors.update(((encode.__name__, text), vector) for text, vector in zip(new, vectors))
        return np.stack([self._vectors[(encode.__name__, text)] for text in texts])

    def score(self, pairs, metas=None) -> np.ndarray:
        import torch

        queries = self._encode([q for q, _ in pairs], self.model.encode_query)
        documents = self._encode([d for _, d in pairs], self.model.encode_document)
        similarity = self.model.similarity_pairwise(torch.from_numpy(queries), torch.from_numpy(documents))
        return similarity.double().numpy()

    def count_tokens(self, text: str) -> int:
        return tokens_in(self.model.tokenizer, text)

    def describe(self) -> dict:
        modules = [type(module).__name__ for module in self.model]
        return {"modules": " > ".join(modules), "similarity": str(self.model.similarity_fn_name),
                "max_seq_length": self.model.max_seq_length, "window": self.window,
                **({"calibration": vars(self.calibration)} if self.calibration else {})}
