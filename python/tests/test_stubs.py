"""The installed package ships its type stubs and py.typed, and the stubs name exactly what the
module exports."""

import ast
import pathlib

import ldp_bo

PACKAGE = pathlib.Path(ldp_bo.__file__).parent


def stub_classes_and_functions():
    tree = ast.parse((PACKAGE / "__init__.pyi").read_text(encoding="utf-8"))
    return {n.name: n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}


def test_the_wheel_ships_stubs_and_py_typed():
    assert (PACKAGE / "py.typed").is_file()
    assert (PACKAGE / "__init__.pyi").is_file()


def test_the_stubs_name_every_export_and_nothing_else():
    stubs = stub_classes_and_functions()
    exported = {n for n in dir(ldp_bo) if not n.startswith("_")} - {"ldp_bo"}  # the native module
    assert set(stubs) == exported
    reporter = {n.name for n in stubs["Reporter"].body if isinstance(n, ast.FunctionDef)}
    public = {n for n in dir(ldp_bo.Reporter) if not n.startswith("_")}
    assert reporter - {"__init__"} == public


def test_the_stubs_parameters_are_the_modules():
    import inspect

    stubs = stub_classes_and_functions()
    for name, runtime in [("privatise", ldp_bo.privatise), ("Reporter", ldp_bo.Reporter)]:
        node = stubs[name]
        if isinstance(node, ast.ClassDef):
            node = next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
        args = node.args
        stub_names = [a.arg for a in args.args + args.kwonlyargs if a.arg != "self"]
        assert stub_names == list(inspect.signature(runtime).parameters), name
