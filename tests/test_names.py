"""The reserved system names and the schema that keeps configs from taking them."""

import yaml

from posbias import names
from posbias.config import SCHEMA_PATH


def test_the_schema_reserves_exactly_the_workflows_system_names():
    properties = yaml.safe_load(SCHEMA_PATH.read_text())["properties"]
    for section in ("models", "external_runs"):
        assert set(properties[section]["propertyNames"]["not"]["enum"]) == set(names.SYSTEMS), section
    assert properties["retrievers"]["propertyNames"]["not"]["enum"] == [names.GIVEN]
