"""posbias.rankers.declaration: an argument's schema entry and a declaration's lazy class."""

from posbias.rankers.declaration import REQUIRED, Argument, Chunking, RankerDeclaration


def test_an_arguments_schema_entry_carries_its_default_only_where_the_config_is_filled():
    width = Argument("width", {"type": "integer"}, "how wide", default=3)
    assert width.json_schema() == {"type": "integer", "description": "how wide"}
    assert Argument("width", {"type": "integer"}, default=3, schema_default=True).json_schema() == {
        "type": "integer", "default": 3}
    assert Argument("name", {"type": "string"}).required and Argument("name", {"type": "string"}).default is REQUIRED
    assert width.with_default(5).default == 5 and width.with_default(5).json_schema() == width.json_schema()


def test_a_declaration_imports_its_class_only_when_asked():
    declaration = RankerDeclaration("ordered", "test", Chunking.LISTWISE, (Argument("n", {"type": "integer"}),),
                                    "collections:OrderedDict")
    assert declaration.listwise and declaration.argument_names == {"n"}
    from collections import OrderedDict

    assert declaration.load_class() is OrderedDict
