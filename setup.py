"""The package list, which pyproject.toml cannot give: lmzip* plus the bundled corpora as ``lmzip.corpora``.

The corpora stay at the repository's top (docs and scripts name ``corpora/``); in a wheel they are package
data under ``lmzip/corpora/`` so that ``lmzip bench`` finds them from an install.
"""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["lmzip", "lmzip.*"]), "lmzip.corpora"],
      package_dir={"lmzip.corpora": "corpora"})
