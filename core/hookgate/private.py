"""hookgate's private per-user places (the warm cores' sockets, the config cache): whether a
directory is one, and stable file names in them.

No imports but `posix` (built in, loaded with the interpreter; `os` re-exports it): the warm
client runs this on every hook call (tests/test_hook_path_is_light.py holds it to that).
"""

import posix


def owned_private_dir(path: str) -> bool:
    """Only a directory of ours that nobody else may enter holds sockets or cached config: a call
    sends its environment, and must not send it to another user's listener."""
    try:
        st = posix.lstat(path)
    except OSError:
        return False
    is_dir = st.st_mode & 0o170000 == 0o040000
    return is_dir and st.st_uid == posix.geteuid() and st.st_mode & 0o077 == 0


def fnv1a64(data: bytes) -> int:
    """A stable hash without importing hashlib (which costs more than the whole warm client)."""
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h
