"""setuptools' build backend, with every wheel built from the sources as they are now.

setuptools copies the packages into build/lib and makes the wheel from that folder, and it never
removes from it what the sources no longer hold (pypa/setuptools#1871): a module deleted or moved
since an earlier build of the same checkout would still ship, and a wheel the tests install would
prove a tree that is not there. So build/lib goes before each wheel. PEP 517 runs the hooks in the
root of the source tree, where setuptools keeps it."""

from __future__ import annotations

import glob
import shutil
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 (every other hook as setuptools has it)
from setuptools.build_meta import __all__  # noqa: F401


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    for folder in glob.glob("build/lib*"):  # build/lib, or build/lib.<platform> where setuptools names one
        shutil.rmtree(folder, ignore_errors=True)
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
