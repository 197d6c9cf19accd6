"""The pure part of the completion's import context: which imports a
document has, where their modules may live, and a name's definition."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from rhema_lsp.completion.imports import (
    DEF_LINES,
    Imported,
    candidates,
    definition,
    imports_of,
)

ROOT = PurePosixPath("/w")


def test_python_imports_plain_from_parenthesised_and_relative() -> None:
    text = (
        "import os, pkg.sub as s\n"
        "from .util import (helper,\n    other as o)\n"
        "from . import sibling\n"
        "from pkg.mod import thing  # why\n"
        "x = 1  # from a import b is not an import\n"
    )
    assert imports_of("app.py", text) == [
        Imported("os"),
        Imported("pkg.sub"),
        Imported(".util", ("helper", "other")),
        Imported(".sibling"),
        Imported("pkg.mod", ("thing",)),
    ]


def test_python_candidates_search_the_folder_the_roots_and_src() -> None:
    here = PurePosixPath("/w/app/main.py")
    assert candidates(here, Imported("pkg.mod"), [ROOT]) == [
        PurePosixPath("/w/app/pkg/mod.py"),
        PurePosixPath("/w/app/pkg/mod.pyi"),
        PurePosixPath("/w/app/pkg/mod/__init__.py"),
        PurePosixPath("/w/pkg/mod.py"),
        PurePosixPath("/w/pkg/mod.pyi"),
        PurePosixPath("/w/pkg/mod/__init__.py"),
        PurePosixPath("/w/src/pkg/mod.py"),
        PurePosixPath("/w/src/pkg/mod.pyi"),
        PurePosixPath("/w/src/pkg/mod/__init__.py"),
    ]
    assert candidates(here, Imported("..up", ("x",)), [ROOT])[0] == PurePosixPath("/w/up.py")


def test_script_imports_are_relative_specifiers_only() -> None:
    text = (
        "import React, { useState } from 'react';\n"
        "import base, { a as b, type T } from './lib/util';\n"
        'import * as ns from "../ns.js";\n'
        "export { x } from './x'\n"
    )
    assert imports_of("page.tsx", text) == [
        Imported("./lib/util", ("default", "a", "T")),
        Imported("../ns.js", ()),
        Imported("./x", ("x",)),
    ]
    found = candidates(PurePosixPath("/w/web/page.tsx"), Imported("../ns.js"), [ROOT])
    assert found[0] == PurePosixPath("/w/ns.js")
    assert PurePosixPath("/w/ns.ts") in found and PurePosixPath("/w/ns.js/index.ts") in found


def test_definitions_are_a_header_and_a_few_lines() -> None:
    body = "".join(f"    line{n}\n" for n in range(20))
    text = f"import x\n\nLIMIT: int = 5\n\nasync def fetch(url):\n{body}\nclass K:\n    pass\n"
    found = definition("m.py", text, "fetch")
    assert found is not None and found.startswith("async def fetch(url):")
    assert len(found.split("\n")) == DEF_LINES
    assert definition("m.py", text, "LIMIT") == "LIMIT: int = 5"
    assert definition("m.py", text, "fet") is None
    script = "export function a(x: number): number {\n  return x\n}\nexport default class Z {}\n"
    assert definition("m.ts", script, "a") == script.split("\n}")[0] + "\n}"
    assert definition("m.ts", script, "default") == "export default class Z {}"


@pytest.mark.parametrize(
    "text",
    [
        "from",
        "import",
        "from import x",
        "from ( import )",
        "import {" + "a," * 10_000,
        "from x import (" + "a, " * 10_000,
        "import \x00\n",
        "from " + "." * 5000 + " import a",
        "import " + " \t" * 20_000 + "!",  # no backtracking blow-up
        "from" + " \t" * 20_000 + "!",
        "import x from \n" * 5000,
    ],
)
def test_hostile_imports_are_read_without_failing(text: str) -> None:
    for path in ("h.py", "h.ts"):
        for imported in imports_of(path, text):
            candidates(PurePosixPath("/w/h.py"), imported, [ROOT])
    assert definition("h.py", text, "a.*(") is None
