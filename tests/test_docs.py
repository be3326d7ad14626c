"""The docs site: a strict build, no link out of the repository, a complete rule map, a reproduction page per
paper config, and the generators of docs/hooks.py. (The pages' commands are run by tests/test_readme.py.)"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
RULE_FILES = [REPO / "Snakefile", *sorted((REPO / "rules").glob("*.smk"))]
HOOKS_SPEC = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
hooks = importlib.util.module_from_spec(HOOKS_SPEC)
HOOKS_SPEC.loader.exec_module(hooks)


# --- the build ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built strictly (any warning fails the build) into a scratch directory."""
    site_dir = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's banner about its successor, not a build warning
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
                            cwd=REPO, env=env, text=True, capture_output=True, timeout=300)
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr[-4000:]}"
    assert "WARNING" not in result.stderr, result.stderr[-4000:]
    return site_dir


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.found += [value for name, value in attrs if name in ("href", "src") and value]


def outside(link: str, page: Path, site_dir: Path) -> bool:
    """Whether a link leaves the built site: a scheme or host (the network, file:) or a path above the site."""
    parts = urlsplit(link)
    if parts.scheme == "data":  # inline content, loads nothing
        return False
    if parts.scheme or parts.netloc:
        return True
    path = unquote(parts.path)
    base = site_dir if path.startswith("/") else page.parent  # "/x" is the site's root, as the 404 page writes
    target = (base / path.lstrip("/")).resolve() if path else page
    return not target.is_relative_to(site_dir.resolve())


def test_outside_finds_links_that_leave_the_site(tmp_path):
    page = tmp_path / "stages" / "data.html"
    assert outside("https://fonts.googleapis.com/css", page, tmp_path)
    assert outside("//cdn.example.org/x.js", page, tmp_path)
    assert outside("../../shared/specs/x.md", page, tmp_path)
    assert not outside("../index.html#layers", page, tmp_path)
    assert not outside("#top", page, tmp_path)
    assert not outside("/assets/main.css", page, tmp_path)


def test_site_builds_strictly_with_every_page(site):
    for page in ("index", "getting-started", "architecture", "rankers", "configuration", "extending", "timings",
                 "stages/sweep", "reproduction/msmarco_v1", "api/index"):
        assert (site / f"{page}.html").is_file(), f"{page}.html not built"


def test_no_page_links_outside_the_repository(site):
    for page in site.rglob("*.html"):
        parser = Links()
        parser.feed(page.read_text(encoding="utf-8"))
        leaving = [link for link in parser.found if outside(link, page, site)]
        assert not leaving, f"{page.relative_to(site)}: links outside the repository: {leaving[:5]}"


def test_no_page_points_at_files_outside_the_repository():
    for page in [REPO / "README.md", *DOCS.rglob("*.md")]:
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"\.\./shared|/work/|specs/", text), \
            f"{page.relative_to(REPO)} points outside the repository"


# --- the rule map ------------------------------------------------------------------------------------------

def rule_names() -> set[str]:
    """Every rule of the workflow: `rule name:` and, for rules named in a loop, the `name:` template with its
    loop variable (`f"litm_predict_{_task}"` as `litm_predict_{task}`)."""
    names = set()
    for path in RULE_FILES:
        text = path.read_text(encoding="utf-8")
        names |= set(re.findall(r"^\s*rule (\w+):", text, flags=re.M))
        names |= {template.replace("{_", "{") for template in
                  re.findall(r"^\s*name:\s*\n\s*f\"([\w{}]+)\"", text, flags=re.M)}
    return names


def rule_map_rows() -> dict[str, str]:
    """Each row of the rule map (generated from the rules' docstrings): the rule -> its "by hand" cell."""
    return {name: by_hand for name, _, by_hand in hooks.workflow_rules()}


def rule_map() -> set[str]:
    return set(rule_map_rows())


def command_of(words: list[str]):
    """The parser `posbias <words>` reaches (subcommands first, then the flags it must know), or a message."""
    from posbias.cli import parser

    current = parser()
    words = list(words)
    while words and not words[0].startswith("--"):
        choices = next((a.choices for a in current._actions if a.choices and isinstance(a.choices, dict)), {})
        if words[0] not in choices:
            return f"no command {words[0]!r} (known: {', '.join(sorted(choices))})"
        current = choices[words.pop(0)]
    unknown = [w for w in words if w not in current._option_string_actions]
    return f"no flags {unknown}" if unknown else current


def test_rule_names_are_read_from_rules_and_loop_templates():
    names = rule_names()
    assert {"all", "train", "rerank", "provenance", "litm_predict_{task}", "{table}"} <= names


def test_rule_map_names_every_rule_and_no_other():
    rules, mapped = rule_names(), rule_map()
    assert not rules - mapped, f"the rule map lacks {sorted(rules - mapped)}"
    assert not mapped - rules, f"the rule map names rules not in rules/: {sorted(mapped - rules)}"
    assert "<!-- generated: rule_map -->" in (DOCS / "architecture.md").read_text(encoding="utf-8")


def test_every_rule_snakemake_lists_is_in_the_rule_map():
    """Snakemake's own list of the default config's rules, each a row of the map (a loop's rules, `table1` and
    `litm_predict_qa`, the row of their template)."""
    listed = subprocess.run([sys.executable, "-m", "snakemake", "--list-rules"], cwd=REPO, capture_output=True,
                            text=True, timeout=300, check=True).stdout
    names = re.findall(r"^(\w+)", listed, flags=re.M)
    patterns = [re.compile(re.sub(r"\\{\w+\\}", r"\\w+", re.escape(row)) + "$") for row in rule_map()]
    assert len(names) > 40
    assert [name for name in names if not any(pattern.match(name) for pattern in patterns)] == []


def test_a_rule_without_its_docstring_is_refused(tmp_path):
    rules = tmp_path / "x.smk"
    rules.write_text('rule a:\n    """`a.txt`\n\n    By hand: `posbias a`"""\n    output: "a.txt"\n\n'
                     'rule b:\n    output: "b.txt"\n')
    with pytest.raises(ValueError, match=r"x.smk: rules \['b'\] have no docstring"):
        hooks.workflow_rules([rules])
    rules.write_text('rule a:\n    """`a.txt`"""\n    output: "a.txt"\n')
    with pytest.raises(ValueError, match="rule a has no docstring ending in 'By hand"):
        hooks.workflow_rules([rules])


def test_every_rule_s_work_has_a_command_that_exists():
    """Each rule but `all` names at least one `posbias` command in the "by hand" column, and each named command
    and flag is one the command line has."""
    for rule, cell in rule_map_rows().items():
        commands = re.findall(r"`(posbias [^`]+)`", cell)
        if rule == "all":
            continue
        assert commands, f"the rule map gives {rule} no `posbias ...` command"
        for command in commands:
            found = command_of(command.split()[1:])
            assert not isinstance(found, str), f"{rule}: `{command}`: {found}"


def test_the_command_check_refuses_what_the_command_line_lacks():
    assert command_of(["study", "nope"]).startswith("no command 'nope'")
    assert command_of(["fetch", "--nope"]) == "no flags ['--nope']"
    assert not isinstance(command_of(["fetch", "--folds"]), str)


def test_a_page_added_under_stages_joins_the_nav_without_an_edit(tmp_path):
    (tmp_path / "stages").mkdir()
    for name in ("data.md", "lengths.md"):
        (tmp_path / "stages" / name).write_text("# a stage\n")
    config = {"docs_dir": str(tmp_path), "nav": [{"Home": "index.md"}, {"Stages": [{"Data": "stages/data.md"}]}]}
    assert hooks.on_config(config)["nav"][1] == {"Stages": [{"Data": "stages/data.md"}, "stages/lengths.md"]}


# --- pages per paper config ---------------------------------------------------------------------------------

def test_every_paper_config_has_a_reproduction_page_in_the_menu():
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    listed = re.findall(r"reproduction/(\w+)\.md", str(nav))
    for config in sorted((REPO / "config" / "paper").glob("*.yaml")):
        page = DOCS / "reproduction" / f"{config.stem}.md"
        assert page.is_file(), f"{config.name}: no docs/reproduction/{config.stem}.md"
        assert f"<!-- generated: reproduction {config.stem} -->" in page.read_text(encoding="utf-8")
        assert config.stem in listed, f"{page.relative_to(REPO)} is not in mkdocs.yml's nav"


# --- the generators -----------------------------------------------------------------------------------------

def test_configuration_reference_lists_keys_defaults_and_shared_definitions():
    schema = {"properties": {"training": {"type": "object", "description": "the recipe",
                                          "properties": {"epochs": {"type": "integer", "default": 1,
                                                                    "description": "passes | over the data"}}},
                             "models": {"type": "object", "additionalProperties": {"$ref": "#/$defs/model"}}},
              "$defs": {"model": {"description": "one ranker", "properties": {"lr": {"type": "number"}}}}}
    text = hooks.configuration_reference(schema)
    assert "| `training.epochs` | integer | `1` | passes \\| over the data |" in text
    assert "| `models.<name>` | [model](#model) |" in text
    assert "### model\n\none ranker" in text and "| `lr` | number |" in text


def test_ranker_table_has_every_ranker_of_the_catalog():
    from posbias.rankers import catalog

    table = hooks.ranker_table()
    for name in catalog.ALL:
        assert f"| `{name}` |" in table
    assert "`projection_size`" in table


def test_reproduction_summary_of_a_config():
    config = {"experiment": "x", "querysets": {"dev": {}}, "training": {"seeds": [1, 2]},
              "models": {"maxp": {"ranker": "maxp"}, "e5": {"ranker": "biencoder", "zero_shot": True}},
              "departures": {"epochs": {"paper": "2", "here": "1", "why": "time"}},
              "reproduction": {"table1": {"source": "paper, Table 1", "tolerance": {"abs": 0.01, "why": "seeds"},
                                          "values": {"maxp": {"dev RR@10": 0.39}}}}}
    text = hooks.reproduction_summary(config)
    assert "`results/x/`" in text and "2 (1 trained with seeds [1, 2], 1 zero-shot or listwise)" in text
    assert "| epochs | 2 | 1 | time |  |" in text
    assert "| `maxp` | 0.39 |" in text
    assert "None listed." in hooks.reproduction_summary({"models": {}})


def test_unknown_generated_kind_is_an_error():
    with pytest.raises(ValueError, match="unknown kind"):
        hooks.generated("nothing", None)
