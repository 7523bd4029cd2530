"""Where numba keeps compiled code when the package's own folders are not writable: a private folder, first given
what the package's folders hold."""

from __future__ import annotations

import os

from numba.core.caching import UserWideCacheLocator

from lmzip.arith import jitdir


def _package(root):
    """A package folder with compiled code in both wings' __pycache__ (and a .pyc, which is Python's, not numba's)."""
    for wing, names in (("arith", ["kernels.f-10.py311.nbi", "kernels.f-10.py311.1.nbc"]),
                        ("cm", ["model._code-288.py311.nbi", "model._code-288.py311.1.nbc", "cm-sources.sha256",
                                "model.cpython-311.pyc"])):
        (root / wing / "__pycache__").mkdir(parents=True)
        (root / wing / "__init__.py").write_text("")
        for name in names:
            (root / wing / "__pycache__" / name).write_bytes(f"{wing}/{name}".encode())
    return root


def test_the_private_folder_gets_the_package_s_compiled_code_once(tmp_path, monkeypatch):
    pkg = _package(tmp_path / "lmzip")
    monkeypatch.setattr(jitdir, "PKG", pkg)
    cache = tmp_path / "private"
    assert jitdir.seed(cache) == 5
    for wing in ("arith", "cm"):
        there = cache / UserWideCacheLocator.get_suitable_cache_subpath(str(pkg / wing / "__init__.py"))
        for f in (pkg / wing / "__pycache__").iterdir():
            if f.suffix == ".pyc":
                assert not (there / f.name).exists()
                continue
            assert (there / f.name).read_bytes() == f.read_bytes()
            assert (there / f.name).stat().st_mtime == f.stat().st_mtime  # numba's own checks are against the source
        assert not [p for p in there.iterdir() if p.name.startswith(".")]  # no partial copy left
    assert jitdir.seed(cache) == 0  # what it holds is as new: nothing copied again
    index = pkg / "cm" / "__pycache__" / "model._code-288.py311.nbi"
    index.write_bytes(b"compiled again")
    os.utime(index, (index.stat().st_atime, index.stat().st_mtime + 10))
    assert jitdir.seed(cache) == 1
    there = cache / UserWideCacheLocator.get_suitable_cache_subpath(str(pkg / "cm" / "__init__.py"))
    assert (there / index.name).read_bytes() == b"compiled again"


def test_a_package_without_compiled_code_seeds_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(jitdir, "PKG", tmp_path / "empty")
    assert jitdir.seed(tmp_path / "private") == 0 and not (tmp_path / "private").exists()
