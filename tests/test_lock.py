"""The supply chain is locked (issue 32, item 9): every requirement of requirements.txt,
requirements-dev.txt and requirements-models.txt is pinned with `==` and at least one sha256 in
its lock (scripts/lock.sh makes them, scripts/venv.sh installs them with --require-hashes), the
pin still meets what the .txt file asks, both locks agree (they install into one .venv), torch
is the CPU build, and what is installed here is what the locks say: a lock left stale after a
requirements edit, or a .venv not reinstalled from it, fails the fast tier."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
HASH = re.compile(r"--hash=sha256:[0-9a-f]{64}$")


def _logical_lines(path: Path) -> list[str]:
    """A requirements file's lines with comments gone and backslash continuations joined."""
    text = re.sub(r"\\\n", " ", path.read_text())
    lines = (re.sub(r"(^|\s)#.*", "", line).strip() for line in text.splitlines())
    return [line for line in lines if line]


def _wanted(name: str) -> list[Requirement]:
    """What a .txt file asks for, following its `-r` includes."""
    found: list[Requirement] = []
    for line in _logical_lines(ROOT / name):
        if line.startswith("-r "):
            found += _wanted(line.split()[1])
        else:
            found.append(Requirement(line))
    return found


def _locked(name: str, root: Path = ROOT) -> dict[str, tuple[str, list[str]]]:
    """A lock's pins: canonical name -> (version, hashes); any other line is an error."""
    pins: dict[str, tuple[str, list[str]]] = {}
    for line in _logical_lines(root / name):
        spec, *options = line.split()
        found = re.fullmatch(r"([A-Za-z0-9._-]+)==([^\s;]+)", spec)
        assert found, f"{name}: {line!r} is not pinned with =="
        assert options and all(HASH.match(o) for o in options), f"{name}: {spec} has no hash"
        pins[canonicalize_name(found[1])] = (found[2], options)
    return pins


LOCKS = {
    "requirements.txt": "requirements.lock",
    "requirements-dev.txt": "requirements-dev.lock",
    "requirements-models.txt": "requirements-models.lock",
}


@pytest.mark.parametrize("wanted", sorted(LOCKS))
def test_every_requirement_is_pinned_with_a_hash_and_still_meets_its_file(wanted: str) -> None:
    pins = _locked(LOCKS[wanted])
    stale = []
    for req in _wanted(wanted):
        version = pins.get(canonicalize_name(req.name), ("missing",))[0]
        if version == "missing" or not req.specifier.contains(Version(version), prereleases=True):
            stale.append(f"{req.name}{req.specifier} wanted, {version} locked")
    assert not stale, f"{LOCKS[wanted]} is stale (run scripts/lock.sh): {stale}"


def test_the_app_lock_agrees_with_the_dev_lock() -> None:
    dev = _locked("requirements-dev.lock")
    for name, (version, _) in _locked("requirements.lock").items():
        assert dev.get(name, ("missing",))[0] == version, f"{name}: the two locks differ"


def test_torch_is_the_cpu_build_and_nothing_pulls_cuda() -> None:
    for lock in ("requirements.lock", "requirements-dev.lock"):
        pins = _locked(lock)
        assert pins["torch"][0].endswith("+cpu"), f"{lock}: torch {pins['torch'][0]}"
        assert not [name for name in pins if name.startswith(("nvidia-", "triton"))], lock


def test_what_is_installed_is_what_the_locks_say() -> None:
    """The tests run in .venv as ./test.sh installs it (the dev lock and the model packages)."""
    for lock in ("requirements-dev.lock", "requirements-models.lock"):
        for name, (version, _) in _locked(lock).items():
            try:
                installed = metadata.version(name)
            except metadata.PackageNotFoundError:
                installed = "not installed"
            assert installed == version, (
                f"{name} {installed} is installed, {lock} says {version}: run ./test.sh "
                "(it reinstalls .venv from the locks when a lock changed)"
            )


def test_the_parser_refuses_a_pin_without_a_hash_and_a_range(tmp_path: Path) -> None:
    """So that the tests above cannot pass by reading nothing."""
    (tmp_path / "bare.lock").write_text("numpy==2.4.6  # via x\n")
    (tmp_path / "loose.lock").write_text("numpy>=2 \\\n    --hash=sha256:" + "0" * 64 + "\n")
    (tmp_path / "good.lock").write_text("NumPy==2.4.6 \\\n    --hash=sha256:" + "0" * 64 + "\n")
    with pytest.raises(AssertionError, match="no hash"):
        _locked("bare.lock", tmp_path)
    with pytest.raises(AssertionError, match="not pinned"):
        _locked("loose.lock", tmp_path)
    assert _locked("good.lock", tmp_path) == {"numpy": ("2.4.6", ["--hash=sha256:" + "0" * 64])}
