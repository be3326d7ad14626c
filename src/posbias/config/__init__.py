"""The one config layer, for the workflow and the CLI alike: files read and layered, validated against the schema
assembled from the sections' fragments, derived and cross-checked section by section.

- `loader`: reading, `base:` layering, overrides, the assembled schema (`schema()`), validation and `prepare`;
- `section`: what a section declares (key, schema fragment, check, derive, accessor); `ConfigError` is
  `posbias.errors`' (declarations elsewhere raise it too), re-exported here;
- `registry`: the one list of stages and of section modules;
- `prepared`: the `Config` a workflow or command holds (`CFG.<section>`);
- `canonical`: job params in a form that only a changed value changes;
- `study`: the long-document study's sections go together;
- `sections/`: the sections every stage reads (experiment, departures, querysets, models, llm, revisions,
  reproduction); each stage's own live in its folder's config.py (posbias/training/config.py, ...).
"""

from posbias.config.canonical import canonical
from posbias.config.loader import load_config, merge, prepare, read_config_file, read_layered, schema, validate
from posbias.config.prepared import Config
from posbias.config.section import ConfigError

__all__ = ["Config", "ConfigError", "canonical", "load_config", "merge", "prepare", "read_config_file",
           "read_layered", "schema", "validate"]
