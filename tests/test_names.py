"""The reserved system names and the schema that keeps configs from taking them."""

from posbias import names
from posbias.config import schema


def test_the_schema_reserves_exactly_the_workflows_system_names():
    properties = schema()["properties"]
    for section in ("models", "external_runs"):
        assert set(properties[section]["propertyNames"]["not"]["enum"]) == set(names.SYSTEMS), section
    assert properties["retrievers"]["propertyNames"]["not"]["enum"] == [names.GIVEN]
