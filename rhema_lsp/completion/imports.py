"""What a document's imports name, where those modules may live, and the
definition of a name in a module's text: the pure part of the completion's
import context (:mod:`rhema_lsp.completion.import_context` reads the files).

Rules it keeps:

- **Read from the text, not run.** Imports are found with line patterns
  (the code being typed rarely parses): Python's ``import a.b`` and ``from
  a.b import c, d`` (parenthesised over several lines, relative with dots),
  and JS/TS ``import ... from '...'`` / ``export ... from '...'`` with a
  relative specifier (a package in ``node_modules`` is no workspace file).
- **Candidates, in order, all absolute.** Python: the document's folder,
  each root and its ``src`` folder; ``a/b.py``, ``a/b.pyi``, then
  ``a/b/__init__.py``; relative imports from the document's package. JS/TS:
  the specifier as written, with ``.ts``/``.tsx``/``.js``/``.jsx``/``.mjs``/
  ``.d.ts`` added, a ``.js`` specifier's ``.ts`` twin, then ``index.*``.
  Whether one exists, and whether it may be read, is the confinement gate's
  to say, not this module's.
- **Short.** A definition is its header and at most :data:`DEF_LINES`
  lines; a module without the name lends its first lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

__all__ = [
    "DEF_LINES",
    "Imported",
    "candidates",
    "definition",
    "imports_of",
    "language_of",
    "module_head",
]

DEF_LINES = 8
"""The most lines a definition snippet keeps (its header included)."""

PYTHON = "python"
SCRIPT = "script"

_PY_SUFFIXES = {".py", ".pyi"}
_JS_SUFFIXES = {".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"}
_JS_TRY = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs")

_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]([^\n#]*)", re.M)
_PY_FROM = re.compile(
    r"^[ \t]*+from[ \t]++(\.*+[\w.]*+)[ \t]++import[ \t]++(\([^)]{0,2000}+\)?+|[^\n#]*+)", re.M
)
_JS_FROM = re.compile(
    r"^[ \t]*+(?:import|export)[ \t]++(?:type[ \t]++)?+([^;'\"]{0,1000}?)"
    r"\bfrom[ \t]*+['\"]([^'\"\n]++)['\"]",
    re.M,
)
_WORD = re.compile(r"^[A-Za-z_$][\w$]*$")


@dataclass(frozen=True, slots=True)
class Imported:
    """One imported module and the names taken from it.

    ``module`` is the module as written (Python's dotted name with its
    leading dots, or the JS/TS specifier); ``names`` the names to find in
    it (``()``: the module itself: its first lines).
    """

    module: str
    names: tuple[str, ...] = ()


def language_of(path: str) -> str | None:
    """``python``, ``script`` (JS/TS) or ``None`` for a file's path."""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in _PY_SUFFIXES:
        return PYTHON
    if suffix in _JS_SUFFIXES:
        return SCRIPT
    return None


def _alias_names(text: str) -> tuple[str, ...]:
    names = []
    for piece in text.replace("(", " ").replace(")", " ").replace("\n", " ").split(","):
        words = piece.split()
        if words and _WORD.match(words[0]) and words[0] != "*":
            names.append(words[0])
    return tuple(names)


def _python_imports(text: str) -> list[Imported]:
    found: list[tuple[int, Imported]] = []
    for match in _PY_IMPORT.finditer(text):
        for piece in match.group(1).split(","):
            words = piece.split()
            if words and re.fullmatch(r"[\w.]+", words[0]):
                found.append((match.start(), Imported(words[0])))
    for match in _PY_FROM.finditer(text):
        module, names = match.group(1), match.group(2)
        if not module.strip("."):
            # ``from . import a``: each name is a module of the package
            found.extend((match.start(), Imported(module + n)) for n in _alias_names(names))
        else:
            found.append((match.start(), Imported(module, _alias_names(names))))
    return [imported for _, imported in sorted(found, key=lambda pair: pair[0])]


def _script_imports(text: str) -> list[Imported]:
    found = []
    for match in _JS_FROM.finditer(text):
        clause, specifier = match.group(1).strip(), match.group(2)
        if not specifier.startswith(("./", "../")):
            continue
        names: list[str] = []
        braces = re.search(r"\{([^}]*)\}", clause)
        if braces:
            for piece in braces.group(1).split(","):
                words = piece.replace("type ", " ").split()
                if words and _WORD.match(words[0]):
                    names.append(words[0])
        default = clause.split("{")[0].split(",")[0].strip()
        if _WORD.match(default) and default != "type":
            names.insert(0, "default")
        found.append(Imported(specifier, tuple(names)))
    return found


def imports_of(path: str, text: str) -> list[Imported]:
    """The imports of the document at ``path`` (its language by suffix)."""
    language = language_of(path)
    if language == PYTHON:
        return _python_imports(text)
    if language == SCRIPT:
        return _script_imports(text)
    return []


def candidates(
    path: PurePosixPath, imported: Imported, roots: list[PurePosixPath]
) -> list[PurePosixPath]:
    """Where ``imported`` (of the document at absolute ``path``) may live, in order."""
    if language_of(str(path)) == PYTHON:
        return _python_candidates(path, imported.module, roots)
    base = path.parent / imported.module
    found = [base, *(base.with_name(base.name + ext) for ext in _JS_TRY)]
    if base.suffix in (".js", ".jsx", ".mjs"):
        found += [base.with_suffix(".ts"), base.with_suffix(".tsx")]
    found += [base / f"index{ext}" for ext in _JS_TRY]
    return [_normal(each) for each in found]


def _normal(path: PurePosixPath) -> PurePosixPath:
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if len(parts) > 1:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return PurePosixPath(*parts)


def _python_candidates(
    path: PurePosixPath, module: str, roots: list[PurePosixPath]
) -> list[PurePosixPath]:
    dots = len(module) - len(module.lstrip("."))
    dotted = [part for part in module.lstrip(".").split(".") if part]
    if dots:
        base = path.parent
        for _ in range(dots - 1):
            base = base.parent
        bases = [base]
    else:
        bases = [path.parent]
        for root in roots:
            bases += [root, root / "src"]
    found: list[PurePosixPath] = []
    for base in dict.fromkeys(bases):
        target = base.joinpath(*dotted) if dotted else base
        if dotted:
            found += [target.with_name(target.name + ".py"), target.with_name(target.name + ".pyi")]
        found.append(target / "__init__.py")
    return found


def _python_definition(lines: list[str], name: str) -> str | None:
    header = re.compile(rf"^(?:async[ \t]+def|def|class)[ \t]+{re.escape(name)}\b")
    assigned = re.compile(rf"^{re.escape(name)}[ \t]*(?::[^=]*)?=")
    for number, line in enumerate(lines):
        if assigned.match(line):
            return line
        if not header.match(line):
            continue
        kept = [line]
        for following in lines[number + 1 : number + DEF_LINES]:
            if following.strip() and not following[:1].isspace():
                break
            kept.append(following)
        while kept and not kept[-1].strip():
            kept.pop()
        return "\n".join(kept)
    return None


def _script_definition(lines: list[str], name: str) -> str | None:
    if name == "default":
        header = re.compile(r"^export[ \t]+default\b")
    else:
        header = re.compile(
            r"^(?:export[ \t]+)?(?:declare[ \t]+)?(?:default[ \t]+)?(?:async[ \t]+)?"
            r"(?:function\*?|class|interface|type|const|let|var|enum|abstract[ \t]+class)"
            rf"[ \t]+{re.escape(name)}\b"
        )
    for number, line in enumerate(lines):
        if not header.match(line):
            continue
        kept = [line]
        for following in lines[number + 1 : number + DEF_LINES]:
            kept.append(following)
            if following.startswith(("}", ")", "]")):
                break
        return "\n".join(kept).rstrip()
    return None


def definition(path: str, text: str, name: str) -> str | None:
    """The definition of top-level ``name`` in the module at ``path`` whose
    text is ``text`` (header and a few lines), or ``None``."""
    lines = text.split("\n")
    if language_of(path) == PYTHON:
        return _python_definition(lines, name)
    return _script_definition(lines, name)


def module_head(text: str, lines: int = DEF_LINES) -> str:
    """The first non-blank lines of a module (at most ``lines``)."""
    kept = text.lstrip("\n").split("\n")[:lines]
    return "\n".join(kept).rstrip()
