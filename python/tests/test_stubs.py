"""The installed package ships its type stubs and py.typed, and the stubs name exactly what the
module exports."""

import ast
import os
import pathlib
import subprocess
import sys

import pytest

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
    for name in ["Reporter", "Optimizer"]:
        methods = {n.name for n in stubs[name].body if isinstance(n, ast.FunctionDef)}
        public = {n for n in dir(getattr(ldp_bo, name)) if not n.startswith("_")}
        assert methods - {"__new__"} == public, name


def parameters(node):
    """(name, kind, has a default) of a stub's parameters, as inspect names the kinds."""
    args = node.args
    positional = args.posonlyargs + args.args
    defaults = [False] * (len(positional) - len(args.defaults)) + [True] * len(args.defaults)
    out = [(a.arg, "POSITIONAL_OR_KEYWORD", d) for a, d in zip(positional, defaults) if a.arg not in ("self", "cls")]
    out += [(a.arg, "KEYWORD_ONLY", d is not None) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    return out


def test_the_stubs_parameters_are_the_modules():
    import inspect

    stubs = stub_classes_and_functions()
    checked = []
    for name, node in stubs.items():
        runtime = getattr(ldp_bo, name)
        pairs = [(name, node, runtime)]
        if isinstance(node, ast.ClassDef):
            if issubclass(runtime, BaseException):
                continue
            methods = [n for n in node.body if isinstance(n, ast.FunctionDef) and not n.decorator_list]
            pairs = [(f"{name}.{m.name}", m, runtime if m.name == "__new__" else getattr(runtime, m.name))
                     for m in methods]
        for label, stub, function in pairs:
            signature = inspect.signature(function)
            actual = [(p.name, p.kind.name, p.default is not inspect.Parameter.empty)
                      for p in signature.parameters.values() if p.name != "self"]
            assert parameters(stub) == actual, label
            checked.append(label)
    assert {"privatise", "Reporter.__new__", "Reporter.report", "Optimizer.__new__", "Optimizer.tell",
            "run", "learners"} <= set(checked)


def test_mypy_stubtest_finds_the_stubs_true_to_the_module():
    """mypy's stubtest: every name, signature, class property (final, disjoint base) of the stubs
    against the module. Skips without mypy unless REQUIRE_MYPY=1 (CI)."""
    if os.environ.get("REQUIRE_MYPY") != "1":
        pytest.importorskip("mypy")
    allowlist = pathlib.Path(__file__).resolve().parents[1] / "stubtest-allowlist.txt"
    result = subprocess.run([sys.executable, "-m", "mypy.stubtest", "ldp_bo", "--allowlist", str(allowlist)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
