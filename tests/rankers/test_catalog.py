from posbias.rankers import catalog
from posbias.rankers.registry import RANKERS


def test_catalog_lists_exactly_the_registered_rankers_as_implemented():
    assert catalog.IMPLEMENTED == set(RANKERS)


def test_listwise_rankers_are_not_torch_modules():
    assert catalog.LISTWISE == {"rankgpt"} and not catalog.LISTWISE & set(RANKERS)
    assert catalog.ALL == catalog.IMPLEMENTED | catalog.LISTWISE


def test_catalog_arguments_are_each_rankers_constructor_arguments():
    from posbias.rankers.registry import constructor_parameters

    for name, cls in RANKERS.items():
        assert catalog.arguments(name) == set(constructor_parameters(cls)), name


def test_the_schema_documents_every_argument_of_every_ranker():
    from posbias.config import schema as config_schema

    schema = config_schema()
    documented = set(schema["$defs"]["ranker_args"]["properties"])
    assert documented == set().union(*(catalog.arguments(name) for name in RANKERS)) | {"tokenizer"}
