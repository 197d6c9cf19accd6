"""The macOS sandbox's profile and command line, made from the same policy
as bubblewrap's (the profile is text: checked here on any machine; on Linux
it is never used). Hostile: paths with quotes, backslashes and control
characters, a root inside a masked folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rhema_lsp.tools import sandbox
from rhema_lsp.tools.command_policy import CommandPolicy
from rhema_lsp.tools.process_limit import MAX_PROCESSES
from rhema_lsp.tools.seatbelt import Seatbelt, UnquotablePath, profile, sbpl_string

ROOT = Path("/Users/u/proj")
SSH = Path("/Users/u/.ssh")
STATE = Path("/Users/u/Library/Application Support/rhema-lsp")


def _rules(text: str) -> list[str]:
    return text.splitlines()


def test_the_profile_denies_by_default_allows_writes_only_where_the_policy_does() -> None:
    text = profile(
        [ROOT], writable=[Path("/Users/u/.cache/uv")], tmp=Path("/private/var/T"), masked=[SSH]
    )
    rules = _rules(text)
    assert rules[:2] == ["(version 1)", "(deny default)"]
    (writes,) = [r for r in rules if r.startswith("(allow file-write*")]
    for place in ('"/Users/u/proj"', '"/Users/u/.cache/uv"', '"/private/var/T"', '"/dev/null"'):
        assert place in writes
    assert '"/tmp"' not in writes and '"/Users/u"' not in writes
    assert "(deny network*)" in rules and "(allow network*)" not in rules
    protected = rules.index(
        '(deny file-write* (subpath "/Users/u/proj/.git") (subpath "/Users/u/proj/.github")'
        ' (subpath "/Users/u/proj/.vscode") (subpath "/Users/u/proj/.devcontainer"))'
    )
    (hidden,) = [r for r in rules if r.startswith("(deny file-read* file-write*")]
    assert '(subpath "/Users/u/.ssh")' in hidden
    assert '(subpath "/Users/u/proj/.rhema")' in hidden
    assert '(regex #"^/Users/u/proj/\\.env[^/]*$")' in hidden
    # the last matching rule decides: every deny comes after the allows it narrows
    assert rules.index(writes) < protected < rules.index(hidden)


def test_the_network_is_allowed_only_when_the_setting_says_so() -> None:
    rules = _rules(profile([ROOT], network=True))
    assert "(allow network*)" in rules and "(deny network*)" not in rules


def test_a_root_inside_a_masked_folder_is_allowed_again_and_only_it() -> None:
    worktree = STATE / "worktrees" / "k" / "0123456789abcdef"
    rules = _rules(profile([worktree], masked=[STATE, SSH]))
    masked = rules.index(f'(deny file-read* file-write* (subpath "{STATE}"))')
    allowed = rules.index(f'(allow file-read* file-write* (subpath "{worktree}"))')
    (secrets,) = [r for r in rules[allowed:] if r.startswith("(deny file-read* file-write*")]
    assert masked < allowed and '"/Users/u/.ssh"' in secrets and f'"{STATE}"' not in secrets


@pytest.mark.parametrize(
    ("path", "quoted"),
    [('/a/"quoted"', '"/a/\\"quoted\\""'), ("/a\\b", '"/a\\\\b"'), ("/ok dir", '"/ok dir"')],
)
def test_paths_are_quoted_as_sbpl_strings(path: str, quoted: str) -> None:
    assert sbpl_string(path) == quoted


@pytest.mark.parametrize("path", ["/a\nb", "/a\x00b", "/a\x1bb", '/x"y'])
def test_a_path_that_cannot_be_quoted_safely_is_refused(path: str) -> None:
    with pytest.raises(UnquotablePath):
        profile([Path(path)])


def test_the_command_line_is_sandbox_exec_with_the_profile_and_the_limited_shell(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    box = Seatbelt("/usr/bin/sandbox-exec", writable=(tmp_path / "cache",))
    argv = box.wrap(
        ["/bin/sh", "-c", "make"],
        roots=[tmp_path / "proj"],
        cwd=tmp_path / "proj",
        env={"HOME": str(home), "TMPDIR": str(tmp_path / "T")},
    )
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"]
    assert argv[3:5] == ["/bin/sh", "-c"] and argv[5].endswith("\nmake")
    assert f"ulimit -u {MAX_PROCESSES}" in argv[5]
    text = argv[2]
    assert f'(subpath "{tmp_path / "proj"}")' in text and f'(subpath "{tmp_path / "T"}")' in text
    assert f'(subpath "{home / ".ssh"}")' in text  # masked
    assert not box.dies_with_parent  # so the watchdog shell stays
    assert box.describe().startswith("sandbox-exec (/usr/bin/sandbox-exec): ")


def test_on_linux_the_seatbelt_is_never_chosen() -> None:
    found = sandbox.availability()
    assert sys.platform.startswith("linux") and found.kind != "seatbelt"
    assert not isinstance(CommandPolicy("auto").sandbox(), Seatbelt)


def test_on_macos_the_policy_builds_the_seatbelt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "rhema_lsp.tools.command_policy.availability",
        lambda: sandbox.Availability("seatbelt", "/usr/bin/sandbox-exec"),
    )
    built = CommandPolicy("auto", network=True).sandbox()
    assert isinstance(built, Seatbelt) and built.network
