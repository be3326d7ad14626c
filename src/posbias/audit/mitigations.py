"""Mitigations of position bias behind one interface, measured by the same batteries as the model they mitigate.

A mitigation is `{kind: KIND, key: value, ...}` (a config's `audit.models.<name>.mitigation`, or `posbias audit
--mitigation "KIND?key=value&..."`); `apply` turns it into what it changes for the audit, and nothing else:

- `window_aggregation` (cross-encoders): the same weights read window by window, the windows' scores taken by
  `aggregate` (max: zero-shot MaxP): spec options `window`, `stride`, `aggregate`;
- `permutation_self_consistency` (listwise rerankers): each list ranked in `k` input orders drawn from the candidate
  set alone and the rankings aggregated by `aggregate` (Borda or reciprocal-rank fusion;
  `posbias.rankers.listwise.aggregate`): the order battery's `consistency_*` settings; for a pairwise judge, `k`
  orders of its two answers drawn, each drawn order's verdict a vote, the majority the verdict (a tie when even;
  with two candidates Borda and reciprocal-rank fusion agree): the judge battery's `consistency_*` settings;
- `relevance_ordered_context` (readers): the retrieved documents placed with the best at both ends of the context
  (ranks 1, 3, 5, ... from the start, 2, 4, ... from the end: "Lost in the Middle"'s advice), the reader batteries'
  `arrange: ends`; the curve's position stays the gold document's retrieval rank;
- `query_aware_contextualization` (readers): the question both before and after the documents (Liu et al. 2024,
  "Lost in the Middle", section 4.2: the authors' `--query-aware-contextualization` template), the reader batteries'
  `prompt: query_aware`; the documents and their order stay as they were, so the cost is the prompt's second copy
  of the question (the same number of prompts);
- `both_orders` (judges): each comparison's verdicts in both orders made one, the same preference both times or
  else a tie, at two prompts a verdict (the judge battery's `combine: both_orders`);
- `debiased_training` (trained rankers): the twin trained on de-biased documents (`models.<twin>.debias`); in a
  config the mitigated entry audits `model` (the twin) where its base audits the original;
- `attention_calibration` (bi-encoders): the same weights, the attention the pooled tokens pay spread evenly over
  baskets of `basket` tokens in the last `depth` share of the layers, mixed with the original by `strength`
  (Michail et al. 2026, arXiv 2606.02737; `posbias.scoring.embedder_calibration`): spec options `calibration_*`;
  one input per pair as before (the cost multiplier is 1; eager attention's extra seconds are in the records);
- `position_balanced_finetuning` (bi-encoders): the twin fine-tuned on questions, disjoint from the audit's, whose
  answering passage sits at the start, the middle and the end of documents alike (Yu et al. 2026, arXiv
  2605.26578; `posbias.audit.balanced_finetuning`): `model`, the twin's directory, is audited in place of the
  original with the same options (the workflow's rule audit_finetune writes it);
- `found_in_the_middle`, `ms_poe`, `attention_sorting` (readers on the local `hf_causal` backend, whose attention
  is reached): attention calibration by the attention a dummy document receives at each slot (Hsieh et al. 2024,
  arXiv 2406.16008; `layers`, `scale`), multi-scale positional encoding (Zhang et al. 2024, arXiv 2403.04797;
  `min_ratio`, `max_ratio`, `layers`), and attention sorting (Peysakhovich & Lerer 2023, arXiv 2310.01427;
  `iterations`), the reader batteries' `attention` (`posbias.reading.attention_mitigations`); the curve's position
  stays the gold document's slot before any sorting. Their cost is model passes per prompt (1 + the documents'
  dummy prefills; 1; 1 + one prefill per iteration), the batteries' `passes_per_prompt`.

The mitigation table (`posbias.audit.mitigation_table.write_mitigations`) sets each mitigated audit beside its
base's: PSI, the metric at the reference position, its mean over positions, and the cost multiplier (the model
inputs the battery computed: pairs times windows, prompts, listwise calls; seconds stay in each audit's record).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Mapping

from posbias.audit.spec import ModelRef, parse_model_spec
from posbias.errors import InputError


@dataclass(frozen=True)
class Kind:
    capability: str | tuple  # the capabilities of the models it applies to (posbias.audit.spec.CAPABILITIES)
    params: Mapping  # its parameters and defaults (None: required)
    choices: Mapping = None  # parameter -> allowed values
    model_kinds: tuple = ()  # restricted to these model kinds (empty: every kind of the capability)
    backends: tuple = ()  # restricted to language models on these backends (empty: any)


KINDS = {
    "window_aggregation": Kind("pairs", {"window": None, "stride": None, "aggregate": "max"},
                               {"aggregate": ("max", "first")}, ("cross-encoder",)),
    "permutation_self_consistency": Kind(("list", "judge"), {"k": 5, "aggregate": "borda", "orders": "shuffles", "seed": 0},
                                         {"aggregate": ("borda", "rrf"), "orders": ("shuffles", "rotations")}),
    "relevance_ordered_context": Kind("reader", {}),
    "query_aware_contextualization": Kind("reader", {}),
    # `model`: the twin's name in the config's models (a label on the command line, where --model loads it)
    "debiased_training": Kind("pairs", {"model": None}, None, ("checkpoint", "cross-encoder")),
    # defaults: the single configuration of arXiv 2606.02737 (B = 128, lambda = 0.5, 50% layer depth)
    "attention_calibration": Kind("pairs", {"basket": 128, "strength": 0.5, "depth": 0.5}, None, ("bi-encoder",)),
    # `model`: the fine-tuned twin's directory (posbias.audit.balanced_finetuning)
    "position_balanced_finetuning": Kind("pairs", {"model": None}, None, ("bi-encoder",)),
    # readers whose attention is reached (posbias.reading.attention_mitigations, where the defaults are argued)
    "found_in_the_middle": Kind("reader", {"layers": "half-", "scale": 1.0}, backends=("hf_causal",)),
    "ms_poe": Kind("reader", {"min_ratio": 1.2, "max_ratio": 1.8, "layers": "2-"}, backends=("hf_causal",)),
    "attention_sorting": Kind("reader", {"iterations": 1}, backends=("hf_causal",)),
    # judges (posbias.audit.judge_battery): both orders asked, a disagreement a tie
    "both_orders": Kind("judge", {}),
}
ATTENTION_KINDS = ("found_in_the_middle", "ms_poe", "attention_sorting")
INTEGER_PARAMS = ("window", "stride", "k", "seed", "basket", "iterations")
SHARE_PARAMS = ("strength", "depth")  # numbers in (0, 1]
NUMBER_PARAMS = {"scale": 0, "min_ratio": 1e-9, "max_ratio": 1e-9}  # numbers at least this


def parse_mitigation(text: str) -> dict:
    """`KIND?key=value&...` (the command line's form) as a mitigation mapping."""
    kind, _, query = text.partition("?")
    mitigation: dict = {"kind": kind}
    for part in filter(None, query.split("&")):
        key, sep, value = part.partition("=")
        if not sep:
            raise InputError(f"--mitigation {text!r}: options must be key=value pairs joined by &")
        mitigation[key] = int(value) if key in INTEGER_PARAMS and value.isdigit() else value
        if key in SHARE_PARAMS or key in NUMBER_PARAMS:
            mitigation[key] = _number(value)
    return mitigation


def checked(mitigation: Mapping, ref: ModelRef, where: str) -> dict:
    """The mitigation with its defaults, refused (one line naming `where`) when its kind is unknown, does not suit
    the model, or a parameter is unknown, missing, of the wrong type or not one of its choices."""
    if not isinstance(mitigation, Mapping) or mitigation.get("kind") not in KINDS:
        raise InputError(f"{where}: expected a mitigation {{kind: ...}} with kind one of {', '.join(KINDS)}, "
                         f"got {mitigation!r}")
    kind = KINDS[mitigation["kind"]]
    capabilities = kind.capability if isinstance(kind.capability, tuple) else (kind.capability,)
    if ref.capability not in capabilities or (kind.model_kinds and ref.kind not in kind.model_kinds):
        takers = ", ".join(kind.model_kinds) or f"models of capability {' or '.join(capabilities)}"
        raise InputError(f"{where}: {mitigation['kind']} applies to {takers}, not to a {ref.kind}")
    if kind.backends and ref.backend not in kind.backends:
        raise InputError(f"{where}: {mitigation['kind']} changes a model's attention, so it needs a reader on the "
                         f"{', '.join(kind.backends)} backend, not {ref.spec!r}")
    params = {key: value for key, value in mitigation.items() if key != "kind"}
    unknown = sorted(set(params) - set(kind.params))
    if unknown:
        raise InputError(f"{where}: unknown {mitigation['kind']} parameters {unknown}; known: {sorted(kind.params)}")
    merged = {**kind.params, **params}
    for key, value in merged.items():
        if value is None and key != "stride":  # stride: the window's by default
            raise InputError(f"{where}: {mitigation['kind']} needs {key}")
        if key in INTEGER_PARAMS and value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                                            or value < (0 if key == "seed" else 1)):
            raise InputError(f"{where}: {mitigation['kind']}.{key} must be a positive whole number, got {value!r}")
        if key in SHARE_PARAMS and (isinstance(value, bool) or not isinstance(value, (int, float))
                                    or not 0 < value <= 1):
            raise InputError(f"{where}: {mitigation['kind']}.{key} must be a number in (0, 1], got {value!r}")
        if key in NUMBER_PARAMS:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < NUMBER_PARAMS[key]:
                raise InputError(f"{where}: {mitigation['kind']}.{key} must be a number of at least "
                                 f"{NUMBER_PARAMS[key]:g}, got {value!r}")
            merged[key] = float(value)  # 1 and 1.0 are one setting (and one cache key)
        if key == "layers":
            from posbias.reading.attention_mitigations import parse_layers

            try:
                parse_layers(value)
            except InputError as err:
                raise InputError(f"{where}: {mitigation['kind']}.{err}") from None
        if key in (kind.choices or {}) and value not in kind.choices[key]:
            raise InputError(f"{where}: {mitigation['kind']}.{key} {value!r} is not one of "
                             f"{', '.join(kind.choices[key])}")
    if merged.get("min_ratio", 0) > merged.get("max_ratio", 1):
        raise InputError(f"{where}: {mitigation['kind']}.min_ratio {merged['min_ratio']} exceeds max_ratio "
                         f"{merged['max_ratio']}")
    return {"kind": mitigation["kind"], **merged}


def apply(ref: ModelRef, settings: Mapping, mitigation: Mapping | None, where: str = "--mitigation"
          ) -> tuple[ModelRef, dict]:
    """The model and the battery settings the mitigation audits (both unchanged without one)."""
    settings = copy.deepcopy(dict(settings))
    if not mitigation:
        return ref, settings
    mitigation = checked(mitigation, ref, where)
    kind = mitigation["kind"]
    if kind == "window_aggregation":
        view = {"window": mitigation["window"], "stride": mitigation["stride"] or mitigation["window"],
                "aggregate": mitigation["aggregate"]}
        if any(key in ref.options for key in view):
            raise InputError(f"{where}: {ref.spec!r} already reads windows; window_aggregation mitigates a FirstP "
                             f"view")
        options = "&".join(f"{key}={value}" for key, value in view.items())
        spec = ref.spec + ("&" if "?" in ref.spec else "?") + options
        windowed = parse_model_spec(spec)
        ref = ModelRef(windowed.kind, windowed.target, windowed.options, ref.name, spec)
    elif kind == "permutation_self_consistency":
        battery = "judge" if ref.capability == "judge" else "order"
        settings[battery].update(consistency_k=mitigation["k"], consistency_aggregate=mitigation["aggregate"],
                                 consistency_orders=mitigation["orders"], consistency_seed=mitigation["seed"])
        if battery == "judge":
            settings["judge"]["combine"] = "permutation_self_consistency"
    elif kind == "relevance_ordered_context":
        for battery in ("reader", "reader_grid"):
            settings[battery]["arrange"] = "ends"
    elif kind == "both_orders":
        settings["judge"]["combine"] = "both_orders"
    elif kind == "query_aware_contextualization":
        for battery in ("reader", "reader_grid"):
            settings[battery]["prompt"] = "query_aware"
    elif kind == "attention_calibration":
        if any(key.startswith("calibration_") for key in ref.options):
            raise InputError(f"{where}: {ref.spec!r} already calibrates its attention; attention_calibration "
                             f"mitigates the model as it comes")
        ref = _with_options(ref, {f"calibration_{key}": mitigation[key] for key in ("basket", "strength", "depth")})
    elif kind == "position_balanced_finetuning":
        ref = _fine_tuned_twin(ref, mitigation["model"], where)
    elif kind in ATTENTION_KINDS:
        for battery in ("reader", "reader_grid"):
            settings[battery]["attention"] = mitigation
    # debiased_training changes the model itself: the twin is what `ref` names
    return ref, settings


def _number(value: str):
    try:
        return float(value)
    except ValueError:
        return value  # refused by `checked`, by name


def _with_options(ref: ModelRef, view: Mapping) -> ModelRef:
    """`ref` with spec options added (its name kept)."""
    options = "&".join(f"{key}={value}" for key, value in view.items())
    spec = ref.spec + ("&" if "?" in ref.spec else "?") + options
    viewed = parse_model_spec(spec)
    return ModelRef(viewed.kind, viewed.target, viewed.options, ref.name, spec)


def _fine_tuned_twin(ref: ModelRef, directory: str, where: str) -> ModelRef:
    """The bi-encoder `directory` in place of `ref`'s (the same options and name), refused when the directory's
    record says it was fine-tuned from another model (a directory not yet written is checked when it loads)."""
    from posbias.audit.balanced_finetuning import read_record

    record = read_record(directory)
    if record is not None and record["base"] != ref.target:
        raise InputError(f"{where}: {directory} was fine-tuned from {record['base']!r}, not from {ref.target!r}")
    _, sep, query = ref.spec.partition("?")
    spec = f"{ref.kind}:{directory}" + (f"?{query}" if sep else "")
    twin = parse_model_spec(spec)
    return ModelRef(twin.kind, twin.target, twin.options, ref.name, spec)


def describe(mitigation: Mapping) -> str:
    """One short line for tables: the kind and its parameters."""
    params = ", ".join(f"{key} {value}" for key, value in mitigation.items() if key not in ("kind", "of")
                       and value is not None)
    return mitigation["kind"].replace("_", " ") + (f" ({params})" if params else "")
