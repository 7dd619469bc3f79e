"""A distribution's version from its ``.dist-info`` folder name (``agent/installed.py``) is the
version ``importlib.metadata`` gives, and anything it cannot read exactly is left to it."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent import installed


@pytest.fixture
def path_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder put first on ``sys.path`` (and importlib.metadata's caches cleared around it)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path
    importlib.invalidate_caches()


def _dist_info(folder: Path, name: str, version: str) -> None:
    """A minimal installed distribution, as a wheel installer leaves it."""
    info = folder / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )


def test_every_installed_distribution_has_the_version_importlib_metadata_gives() -> None:
    answered = 0
    for distribution in importlib.metadata.distributions():
        name = distribution.metadata["Name"]
        assert installed.version(name) == importlib.metadata.version(name), name
        answered += installed._from_folder_names(installed._normalized(name)) is not None
    assert answered >= 50  # the folder names answer, not importlib.metadata behind them


@pytest.mark.parametrize(
    ("folder_name", "asked", "expected"),
    [
        ("Foo.Bar", "foo-bar", "1.2"),
        ("foo_bar", "FOO.BAR", "1.2"),
        ("foo__bar", "foo-bar", "1.2"),
    ],
)
def test_names_match_after_normalization(
    path_folder: Path, folder_name: str, asked: str, expected: str
) -> None:
    _dist_info(path_folder, folder_name, expected)
    assert installed._from_folder_names(installed._normalized(asked)) == expected
    assert installed.version(asked) == importlib.metadata.version(asked) == expected


def test_a_longer_name_with_the_same_start_is_not_the_distribution(path_folder: Path) -> None:
    _dist_info(path_folder, "netagenttest_probe_extra", "9.9")
    with pytest.raises(installed.NotInstalledError):
        installed.version("netagenttest-probe")


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda f: (f / "netagenttest_probe-1.0.egg-info").mkdir(), id="egg-info"),
        pytest.param(lambda f: (f / "netagenttest_probe-1.0-py3.11.egg").mkdir(), id="egg"),
        pytest.param(
            lambda f: (
                _dist_info(f, "netagenttest_probe", "1.0"),
                _dist_info(f, "Netagenttest.Probe", "2.0"),
            ),
            id="two-candidates",
        ),
        pytest.param(lambda f: (f / "netagenttest_probe.dist-info").mkdir(), id="no-version"),
        pytest.param(
            lambda f: (f / "netagenttest_probe-1.0-2.dist-info").mkdir(), id="dash-in-version"
        ),
    ],
)
def test_what_a_folder_name_cannot_say_exactly_is_left_to_importlib_metadata(
    path_folder: Path, make: object
) -> None:
    make(path_folder)  # type: ignore[operator]
    assert installed._from_folder_names("netagenttest_probe") is None


def test_a_zip_on_the_path_is_left_to_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "packed.zip"
    with zipfile.ZipFile(archive, "w") as packed:
        packed.writestr(
            "netagenttest_zipped-3.1.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: netagenttest-zipped\nVersion: 3.1\n",
        )
    monkeypatch.syspath_prepend(str(archive))
    importlib.invalidate_caches()
    try:
        assert installed._from_folder_names("jsonschema") is None
        assert installed.version("netagenttest-zipped") == "3.1"
    finally:
        importlib.invalidate_caches()


def test_the_first_folder_on_the_path_wins_as_in_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    _dist_info(second, "netagenttest_probe", "2.0")
    _dist_info(first, "netagenttest_probe", "1.0")
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(first))
    importlib.invalidate_caches()
    try:
        assert installed.version("netagenttest-probe") == "1.0"
        assert importlib.metadata.version("netagenttest-probe") == "1.0"
    finally:
        importlib.invalidate_caches()


def test_a_missing_or_unreadable_folder_on_the_path_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path / "missing"))
    assert installed.version("jsonschema") == importlib.metadata.version("jsonschema")


def test_a_path_entry_that_is_not_text_is_left_to_importlib_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "path", [b"/nowhere", *sys.path])
    assert installed._from_folder_names("jsonschema") is None


def test_not_installed_is_an_error_of_its_own() -> None:
    with pytest.raises(installed.NotInstalledError):
        installed.version("netagenttest-no-such-distribution")


def test_asking_does_not_import_importlib_metadata(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom agent.installed import version\n"
        "print(version('jsonschema'), version('jsonschema-specifications'))\n"
        "print('importlib.metadata' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert out[0] == f"{importlib.metadata.version('jsonschema')} " + importlib.metadata.version(
        "jsonschema-specifications"
    )
    assert out[1] == "False"
