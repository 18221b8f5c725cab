"""The config cache (hookgate.config.cache): a hit is the config the files say, any change of a
file it depends on is a miss, files still changing are never cached, and processes sharing the
cache never see a torn or foreign entry."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from hookgate.config import cache, load
from hookgate.config.load import load_config
from hookgate.errors import ConfigError

CONFIG = '[pipeline.roles.build]\nrules = [{ deny = ["@e2e"], reason = "no e2e ({file})" }]\n'


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(load._configs, "_memo", {})
    return tmp_path / "cache" / "hookgate"


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written by the test count as settled at once (the racy window has its own test)."""
    monkeypatch.setattr(cache, "RACY_SECONDS", 0.0)


def project(tmp_path: Path, text: str = CONFIG) -> Path:
    path = tmp_path / "project" / ".hookgate" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def entries(cache_home: Path) -> list[Path]:
    return sorted(cache_home.glob("config-*.msgpack"))


def fresh_process_load(path: Path, env: dict[str, str]) -> str:
    code = ("import sys, msgspec; from hookgate.config.load import load_config; "
            "sys.stdout.write(msgspec.json.encode(load_config(__import__('pathlib').Path(sys.argv[1]))).decode())")
    return subprocess.run([sys.executable, "-c", code, str(path)], env=env, capture_output=True, text=True,
                          check=True, timeout=60).stdout


def test_a_hit_is_the_config_the_files_say(tmp_path: Path, cache_home: Path, settled: None) -> None:
    path = project(tmp_path)
    parsed = load._load_config(path)
    assert load_config(path) == parsed
    [entry] = entries(cache_home)
    load._configs._memo.clear()
    assert load_config(path) == parsed  # from the disk entry this time
    # and another process reads the same entry
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home.parent)}
    assert fresh_process_load(path, env) == msgspec.json.encode(parsed).decode()
    assert entries(cache_home) == [entry]


def test_every_change_of_a_file_is_a_miss(tmp_path: Path, cache_home: Path, settled: None) -> None:
    path = project(tmp_path)
    assert load_config(path).pipeline.roles["build"].rules[0].reason == "no e2e ({file})"
    before = path.stat()
    time.sleep(0.02)
    # the same size, and the old mtime put back: only the ctime still says it changed
    path.write_text(CONFIG.replace("no e2e", "No E2E"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert load_config(path).pipeline.roles["build"].rules[0].reason == "No E2E ({file})"
    # replaced by another file (a checkout, an editor's save-by-rename)
    time.sleep(0.02)
    other = path.with_name("new.toml")
    other.write_text(CONFIG.replace("no e2e", "none"))
    other.replace(path)
    replaced = load_config(path)
    assert replaced.pipeline.roles["build"].rules[0].reason == "none ({file})"
    # removed: the preset alone
    path.unlink()
    assert load_config(path) == load._load_config(path) != replaced


def stored_key(path: Path) -> bytes:
    """The key a config's entry is stored under: its files, then the code that read them."""
    return cache.file_key([path, *load.PRESET_FILES]) + cache.file_key(load.CODE)


def test_a_change_of_the_preset_or_of_hookgate_is_a_miss(tmp_path: Path, cache_home: Path, settled: None,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = project(tmp_path)
    first = load_config(path)
    key = stored_key(path)
    version = cache.__version__
    monkeypatch.setattr(cache, "__version__", "99.0")
    assert stored_key(path) != key
    monkeypatch.setattr(cache, "__version__", version)
    preset = tmp_path / "preset.toml"
    preset.write_bytes(load.PRESET_FILES[0].read_bytes())
    monkeypatch.setattr(load, "PRESET_FILES", (preset,))
    assert load_config(path) == first
    # the preset is read when the config is computed: an edit of it moves the key in memory too
    in_memory = cache.file_key([path, *load.PRESET_FILES])
    time.sleep(0.02)
    preset.write_bytes(preset.read_bytes() + b"\n")
    assert cache.file_key([path, *load.PRESET_FILES]) != in_memory
    assert stored_key(path) != key


def test_a_change_of_the_code_that_reads_the_config_is_a_miss_for_the_next_process(
        tmp_path: Path, cache_home: Path, settled: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process keeps its value (the code it runs is the code it loaded); a process started
    after the code changed finds no entry of the old code on disk and computes it again."""
    path = project(tmp_path)
    module = tmp_path / "schema.py"
    module.write_bytes(b"# a copy of the code\n")
    monkeypatch.setattr(load, "CODE", (module,))
    first = load_config(path)
    [entry] = entries(cache_home)
    stored = entry.read_bytes()
    module.write_bytes(b"# the code, edited\n")
    assert load_config(path) is first  # in memory: no look at the code
    computed = []
    monkeypatch.setattr(load._configs, "_memo", {})  # a new process
    monkeypatch.setattr(load, "_load_config", lambda *a: computed.append(a) or first)
    load_config(path)
    assert computed and entry.read_bytes() != stored


def test_files_still_changing_are_never_cached(tmp_path: Path, cache_home: Path) -> None:
    path = project(tmp_path)  # written just now: younger than RACY_SECONDS
    assert cache.file_key([path]) is None
    load_config(path)
    assert entries(cache_home) == [] and load._configs._memo == {}
    old = time.time() - 3 * cache.RACY_SECONDS
    os.utime(path, (old, old))  # the mtime says old, but the ctime says it was touched just now
    assert cache.file_key([path]) is None


def test_an_invalid_config_is_never_cached(tmp_path: Path, cache_home: Path, settled: None) -> None:
    path = project(tmp_path, '[gates.check_file_permissions]\nfail_mod = "closed"\n')
    for _ in range(2):
        with pytest.raises(ConfigError, match="fail_mod"):
            load_config(path)
    assert entries(cache_home) == []


def test_a_damaged_or_foreign_entry_is_recomputed_and_replaced(tmp_path: Path, cache_home: Path, settled: None) -> None:
    path = project(tmp_path)
    good = load_config(path)
    [entry] = entries(cache_home)
    for damage in (b"", b"\x00garbage", entry.read_bytes()[:-7],
                   msgspec.msgpack.encode((stored_key(path), msgspec.Raw(msgspec.msgpack.encode({"preset": 5}))))):
        entry.write_bytes(damage)
        load._configs._memo.clear()
        assert load_config(path) == good
        load._configs._memo.clear()
        assert load_config(path) == good  # ... and the entry was written afresh


def test_a_cache_directory_others_can_write_is_not_used(tmp_path: Path, cache_home: Path, settled: None) -> None:
    cache_home.mkdir(parents=True)
    cache_home.chmod(0o777)
    path = project(tmp_path)
    assert load_config(path) == load._load_config(path)
    assert entries(cache_home) == []


def test_processes_racing_on_one_entry_all_get_the_config(tmp_path: Path, cache_home: Path) -> None:
    path = project(tmp_path)
    time.sleep(cache.RACY_SECONDS + 0.1)
    expected = msgspec.json.encode(load._load_config(path)).decode()
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home.parent)}
    code = ("import sys, msgspec, pathlib; from hookgate.config.load import load_config, _configs; "
            "p = pathlib.Path(sys.argv[1])\nfor _ in range(30):\n    _configs._memo.clear(); "
            "sys.stdout.write(msgspec.json.encode(load_config(p)).decode() + '\\n')")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path)], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(8)]
    outputs = [p.communicate(timeout=120)[0].splitlines() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert [len(lines) for lines in outputs] == [30] * 8
    assert all(line == expected for lines in outputs for line in lines)
    assert len(entries(cache_home)) == 1


def test_the_cache_forgets_the_oldest_projects(tmp_path: Path, cache_home: Path, settled: None,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "MAX_ENTRIES", 4)
    paths = [project(tmp_path / str(i)) for i in range(7)]
    for path in paths:
        load_config(path)
        time.sleep(0.01)
    assert 2 <= len(entries(cache_home)) <= 4
    newest = cache_home / f"config-{cache.fnv1a64(str(paths[-1]).encode()):016x}.msgpack"
    assert newest in entries(cache_home)
