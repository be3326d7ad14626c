"""What a table column is called: its settings and its header. Light on imports, because the config layer
checks headers when the workflow graph is built."""

ZERO_SHOT = "zero-shot"
FINE_TUNED = "fine-tuned"  # a column read from the runs of checkpoints fine-tuned by `finetuning`


def column_header(spec: dict) -> str:
    """A column's header: its `header`, else query set and metric (and the setting, when not zero-shot)."""
    setting = spec.get("setting", ZERO_SHOT)
    default = f"{spec['queryset']} {spec['metric']}" + ("" if setting == ZERO_SHOT else f" ({setting})")
    return spec.get("header", default)
