"""Benchmark: ``edit_file`` and ``write_file`` on a 100,000-line document.

The document is open in an in-memory editor (UTF-16, versioned), as in VS
Code. Figures: the time of each tool call, and the size of the
``WorkspaceEdit`` sent (JSON bytes) next to the size of the file; the target
is an edit proportional to the change: under 1,000 bytes for a one-line change
(ratio = edit bytes / file bytes), and a bounded size per change for a
replace_all touching every line.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import anyio
from lsprotocol import converters

from rhema_lsp.engine import ToolCall, ToolContext
from rhema_lsp.tools import MemoryEditor, WorkspaceTools

LINES = 100_000

Row = tuple[str, float, float, float, float]


def _edit_bytes(editor: MemoryEditor) -> int:
    payload = converters.get_converter().unstructure(editor.received[-1].edit)
    return len(json.dumps(payload).encode())


def main() -> list[Row]:
    """Run the edits, print and return the rows."""
    base = Path(tempfile.mkdtemp(prefix="rhema-bench-edit-"))
    try:
        text = "".join(f"line {n}: some code here = value_{n}  # 漢字 😀\n" for n in range(LINES))
        path = base / "big.py"
        path.write_text(text)
        file_bytes = len(text.encode())
        editor = MemoryEditor([base], position_encoding="utf-16")
        editor.open(path.as_uri(), text, 1)
        tools = WorkspaceTools([base], base, "edit", editor)
        rows: list[Row] = []

        async def timed(name: str, args: dict[str, object]) -> float:
            start = time.perf_counter()
            result = await tools.resolve(ToolCall(id=name, name=name, args=args), ToolContext())
            elapsed = time.perf_counter() - start
            assert not result.is_error, result.content
            return elapsed

        async def run() -> None:
            one = await timed(
                "edit_file",
                {"path": "big.py", "old_text": "line 50000: some", "new_text": "line 50000: any"},
            )
            rows.append(("edit_file one line, s", one, 0.0, 0.0, 1.0))
            size = _edit_bytes(editor)
            rows.append(
                ("edit_file one line, edit bytes", size, file_bytes, size / file_bytes, 1024)
            )
            current = editor.open_document(path.as_uri())
            assert current is not None
            rewritten = current.text.replace("line 70000: some", "line 70000: other")
            whole = await timed("write_file", {"path": "big.py", "content": rewritten})
            rows.append(("write_file one line changed, s", whole, 0.0, 0.0, 1.0))
            size = _edit_bytes(editor)
            rows.append(
                ("write_file one line, edit bytes", size, file_bytes, size / file_bytes, 1024)
            )
            every = await timed(
                "edit_file",
                {
                    "path": "big.py",
                    "old_text": "# 漢字",
                    "new_text": "# kanji",
                    "replace_all": True,
                },
            )
            rows.append(("edit_file replace_all (100k hits), s", every, 0.0, 0.0, 5.0))
            size = _edit_bytes(editor)
            # 100k changes: the edit grows with the number of changes, not the file.
            rows.append(("replace_all, edit bytes per change", size / LINES, 0.0, 0.0, 150.0))

        anyio.run(run)
    finally:
        shutil.rmtree(base)
    print(f"{'figure':<36} {'value':>12} {'file bytes':>12} {'ratio':>9} {'target':>8}")
    for figure, value, baseline, ratio, target in rows:
        base_text = f"{baseline:>12.0f}" if baseline else f"{'-':>12}"
        ratio_text = f"{ratio:>9.5f}" if baseline else f"{'-':>9}"
        print(f"{figure:<36} {value:>12.4f} {base_text} {ratio_text} {target:>8}")
    return rows


if __name__ == "__main__":
    main()
