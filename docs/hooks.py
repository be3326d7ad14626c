"""MkDocs hooks: the parts of the docs that the code and the configs already say.

A page asks for a generated part with a comment on a line of its own, `<!-- generated: KIND [ARGUMENT] -->`:

- `rankers`: the rankers' table, from the rankers' declarations (`ranker_table`);
- `configuration`: the configuration reference, from the schema's `description:` fields (`configuration_reference`);
- `reproduction NAME`: what `config/paper/NAME.yaml` runs, its departures and the published numbers it
  reproduces (`reproduction_summary`).

`benchmarks/timings.md` (the timing history) is copied into the site as `timings.md`. A page added under
`docs/stages/` joins the nav's "Stages" section by itself (titled by its first heading), after those mkdocs.yml
lists, so a new analysis stage's page needs no edit there. Each generator is one
function of plain data, so it can be pointed at a new source without touching the rest.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

REPO = Path(__file__).resolve().parents[1]
STAGE_PAGES = "stages"  # the folder of the stage pages, and the nav section they join
PAPER_CONFIGS = REPO / "config" / "paper"
TIMINGS = REPO / "benchmarks" / "timings.md"
MARKER = re.compile(r"^<!-- generated: (\w+)(?: (\w+))? -->$", flags=re.M)


# --- generators ----------------------------------------------------------------------------------------------

def ranker_table() -> str:
    """Every ranker the config accepts (`models.<name>.ranker`), from the rankers' own declarations
    (`posbias.rankers.declarations`): how each reads a document, its own arguments, then the arguments every
    chunked ranker shares."""
    from posbias.rankers import catalog

    return (catalog.markdown_table() + "\n\nThe chunk arguments, which every ranker but `rankgpt` takes:\n\n"
            + catalog.markdown_chunk_arguments() + "\n")


def configuration_reference(schema: dict) -> str:
    """One table per top-level section of the config and per shared definition (`$defs`): each key with its
    type, default and description."""

    def rows(node: dict, path: str) -> list[str]:
        found = []
        for key, child in node.get("properties", {}).items():
            found += describe(child, f"{path}.{key}" if path else key)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            found += describe(extra, f"{path}.<name>")
        for branch in ("then", "else"):
            if isinstance(node.get(branch), dict):
                found += rows(node[branch], path)
        return found

    def describe(node: dict, path: str) -> list[str]:
        reference = node.get("$ref", "").rpartition("/")[2]
        kind = node.get("type", f"[{reference}](#{reference})" if reference else "")
        kind = "enum: " + ", ".join(f"`{v}`" for v in node["enum"]) if "enum" in node else kind
        default = f"`{_cell(node['default'])}`" if "default" in node else ""
        line = f"| `{path}` | {_cell(kind)} | {default} | {_cell(node.get('description', ''))} |"
        return [line] + rows(node, path)

    header = ["| key | type | default | description |", "| --- | --- | --- | --- |"]
    sections = [f"### {name}\n\n" + "\n".join(header + describe(node, name)) + "\n"
                for name, node in schema.get("properties", {}).items()]
    shared = [f"### {name}\n\n{_cell(node.get('description', ''))}\n\n" + "\n".join(header + rows(node, "")) + "\n"
              for name, node in schema.get("$defs", {}).items()]
    return ("## Sections\n\n" + "\n".join(sections) + "\n## Shared definitions\n\n"
            + "Referred to as `$defs/<name>` in the schema and linked from the sections above.\n\n" + "\n".join(shared))


def reproduction_summary(config: dict) -> str:
    """What a paper config (read with its `base:` files) runs, where it departs from the paper and which
    published numbers it is checked against."""

    def names(mapping) -> str:
        return ", ".join(f"`{name}`" for name in mapping) if mapping else "none of its own"

    models = config.get("models", {})
    trained = [n for n, m in models.items() if not m.get("zero_shot") and m.get("ranker") != "rankgpt"]
    seeds = config.get("training", {}).get("seeds", [])
    lines = [
        f"- results: `results/{config['experiment']}/`" if config.get("experiment") else
        "- not run on its own: configs name it as their `base:`",
        f"- query sets: {names(config.get('querysets', {}))}",
        f"- models: {len(models)} ({len(trained)} trained with seeds {seeds}, "
        f"{len(models) - len(trained)} zero-shot or listwise)",
        f"- tables: {names(config.get('tables', {}))}",
    ]
    departures = config.get("departures", {})
    text = "\n".join(lines) + "\n\n### Departures from the paper\n\n"
    if departures:
        text += "| departure | the paper | here | why | restores the paper |\n| --- | --- | --- | --- | --- |\n"
        text += "".join(f"| {name} | {_cell(d['paper'])} | {_cell(d['here'])} | {_cell(d['why'])} | "
                        f"{_cell(d.get('option', ''))} |\n" for name, d in departures.items())
    else:
        text += "None listed.\n"
    text += "\n### Published numbers it is checked against\n\n"
    reproduction = config.get("reproduction", {})
    if not reproduction:
        return text + "None typed in (`reproduction:`).\n"
    for table, entry in reproduction.items():
        tolerance = entry["tolerance"]
        text += (f"**{table}** ({_cell(entry['source'])}; tolerance abs {tolerance.get('abs', 0)}, "
                 f"rel {tolerance.get('rel', 0)}: {_cell(tolerance['why'])})\n\n")
        columns = sorted({column for cells in entry["values"].values() for column in cells})
        text += "| system | " + " | ".join(columns) + " |\n|" + " --- |" * (len(columns) + 1) + "\n"
        text += "".join(f"| `{system}` | " + " | ".join(str(cells.get(c, "")) for c in columns) + " |\n"
                        for system, cells in entry["values"].items()) + "\n"
    return text


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


# --- MkDocs events -------------------------------------------------------------------------------------------

def generated(kind: str, argument: str | None) -> str:
    if kind == "rankers":
        return ranker_table()
    if kind == "configuration":
        from posbias.config import schema
        return configuration_reference(schema())
    if kind == "reproduction":
        from posbias.config import read_layered
        return reproduction_summary(read_layered(PAPER_CONFIGS / f"{argument}.yaml"))
    raise ValueError(f"<!-- generated: {kind} -->: unknown kind")


def on_page_markdown(markdown: str, page, config, files) -> str:
    return MARKER.sub(lambda match: generated(match[1], match[2]), markdown)


def on_config(config):
    """Every page of docs/stages/ in the nav's "Stages" section: those mkdocs.yml lists first, in its order."""
    section = next(entry["Stages"] for entry in config["nav"] if isinstance(entry, dict) and "Stages" in entry)
    listed = {page for entry in section for page in (entry.values() if isinstance(entry, dict) else [entry])}
    pages = sorted(Path(config["docs_dir"], STAGE_PAGES).glob("*.md"))
    section.extend(f"{STAGE_PAGES}/{page.name}" for page in pages if f"{STAGE_PAGES}/{page.name}" not in listed)
    return config


def on_files(files, config):
    files.append(File.generated(config, "timings.md", content=TIMINGS.read_text(encoding="utf-8")))
    return files
