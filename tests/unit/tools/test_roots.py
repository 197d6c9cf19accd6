"""The root policy (:mod:`rhema_lsp.tools.roots`): the file system's root,
the home directory, every folder above it and the system's own trees are
refused as workspace roots, through symlinks too; a project folder, in the
home directory or under ``/tmp``, is not."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from rhema_lsp.tools.roots import unsafe_root_reason


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake ``HOME`` two levels below the test's folder: ``<tmp>/home/alice``."""
    alice = tmp_path / "home" / "alice"
    (alice / ".aws").mkdir(parents=True)
    (alice / "project").mkdir()
    monkeypatch.setenv("HOME", str(alice))
    return alice


def test_the_home_directory_and_every_folder_above_it_are_refused(home: Path) -> None:
    assert "your home directory" in (unsafe_root_reason(home) or "")
    for above in (home.parent, home.parent.parent):
        reason = unsafe_root_reason(above) or ""
        assert f"holds your home directory ({home})" in reason
        assert str(above) in reason
    assert "file system's root" in (unsafe_root_reason(Path("/")) or "")


def test_a_project_in_the_home_directory_or_beside_it_is_served(home: Path) -> None:
    assert unsafe_root_reason(home / "project") is None
    bob = home.parent / "bob"
    bob.mkdir()
    assert unsafe_root_reason(bob) is None


def test_a_symlink_to_a_folder_above_home_is_refused(home: Path, tmp_path: Path) -> None:
    link = tmp_path / "innocent"
    link.symlink_to(home.parent, target_is_directory=True)
    assert "holds your home directory" in (unsafe_root_reason(link) or "")


def test_the_accounts_own_home_counts_when_home_names_another(home: Path) -> None:
    own = Path(os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir))
    if own == Path("/"):
        pytest.skip("this account's home is the file system's root")
    assert "home directory" in (unsafe_root_reason(own) or "")
    assert unsafe_root_reason(own.parent) is not None  # "/home", or "/" itself


@pytest.mark.parametrize(
    "folder", ["/etc", "/etc/ssl", "/proc", "/proc/self", "/sys", "/dev", "/usr", "/var", "/tmp"]
)
def test_the_systems_own_trees_are_refused(folder: str) -> None:
    reason = unsafe_root_reason(Path(folder)) or ""
    assert folder in reason
    assert "system" in reason


def test_a_project_under_tmp_is_served(tmp_path: Path) -> None:
    assert unsafe_root_reason(tmp_path) is None
    assert unsafe_root_reason(Path("/tmp/checkout")) is None
    assert unsafe_root_reason(Path("/usr/src/linux")) is None
