"""MkDocs hooks: the parts of the docs that the code and the configs already say.

A page asks for a generated part with a comment on a line of its own, `<!-- generated: KIND [ARGUMENT] -->`:

- `rankers`: the rankers' table, from the rankers' declarations (`ranker_table`);
- `configuration`: the configuration reference, from the schema's `description:` fields (`configuration_reference`);
- `reproduction NAME`: what `config/paper/NAME.yaml` runs, its departures and the published numbers it
  reproduces (`reproduction_summary`);
- `rule_map`: every rule of the workflow, what it makes and the command that does its work by hand, from each
  rule's docstring in its rules file (`rule_map`), so adding a rule edits only that file.

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
SNAKEFILE = REPO / "Snakefile"
# a rule and its docstring: `rule name:`, or a rule named in a loop (`rule:` with `name: f"litm_predict_{_task}"`)
RULE_DOCSTRING = re.compile(r'^[ \t]*rule(?: (?P<name>\w+))?:[ \t]*\n[ \t]*"""(?P<doc>.*?)"""'
                            r'(?:\s*name:\s*f"(?P<template>[\w{}]+)")?', flags=re.M | re.S)
BY_HAND = "\n\nBy hand: "


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


def rule_files() -> list[Path]:
    """The Snakefile and the rules files in the order it includes them: its own includes, and for its loop
    (`include: _rules`) every stage's rules file in the stages' registry order (`posbias.config.registry`)."""
    from posbias.config.registry import stage_rules

    files = [SNAKEFILE]
    for include in re.findall(r"^\s*include: (\S+)", SNAKEFILE.read_text(encoding="utf-8"), flags=re.M):
        files += [REPO / path for path in stage_rules(REPO)] if include == "_rules" else [REPO / include.strip('"')]
    return files


def workflow_rules(files: list[Path] | None = None) -> list[tuple[str, str, str]]:
    """(rule, what it makes, the command by hand) of every rule of `files`, in their order, from the rules'
    docstrings: what the rule makes, then a paragraph `By hand: ...`. A rule named in a loop is written with its
    loop variable (`litm_predict_{task}`). A rule without a docstring, or without its `By hand:`, is an error."""
    found = []
    for path in files or rule_files():
        text, where = path.read_text(encoding="utf-8"), path.relative_to(REPO) if path.is_relative_to(REPO) else path
        for match in RULE_DOCSTRING.finditer(text):
            name = match["name"] or (match["template"] or "").replace("{_", "{")
            doc = "\n".join(line.strip() for line in match["doc"].splitlines())
            if not name or BY_HAND not in doc:
                raise ValueError(f"{where}: rule {name or '(unnamed)'} has no docstring ending in "
                                 f"'By hand: ...'")
            makes, _, by_hand = doc.partition(BY_HAND)
            found.append((name, _cell(makes), _cell(by_hand)))
        undocumented = set(re.findall(r"^[ \t]*rule (\w+):", text, flags=re.M)) - {name for name, _, _ in found}
        if undocumented:
            raise ValueError(f"{where}: rules {sorted(undocumented)} have no docstring")
    return found


def rule_map() -> str:
    return "| rule | makes | by hand |\n| --- | --- | --- |\n" + "".join(
        f"| `{name}` | {makes} | {by_hand} |\n" for name, makes, by_hand in workflow_rules())


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
    if kind == "rule_map":
        return rule_map()
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
