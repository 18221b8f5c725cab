"""SHA-256 hex digests (names of kept copies, of calls and sessions; cut values), without loading
OpenSSL where its speed does not pay for it.

`import hashlib` loads the OpenSSL library (about 4 ms here, more than a warm hook call's whole
decision), and a cold hook process that hashes a session id, a call id or a few small files needs
none of OpenSSL's speed: below LARGE bytes the interpreter's own SHA-256 gives the same digest at
no load cost. Large data, and a process that has imported hashlib anyway (a long-lived core),
take OpenSSL's. (An interpreter built without its own SHA-256 always takes hashlib's.)
"""

import sys

LARGE = 1 << 20  # past this, OpenSSL's speed is worth loading it

TYPE_CHECKING = False  # typing's own flag, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Callable, Protocol

    class _Hash(Protocol):
        def hexdigest(self) -> str: ...

_own: "Callable[[bytes], _Hash] | None" = None
_looked = False


def sha256_hex(data: bytes) -> str:
    if len(data) < LARGE and "hashlib" not in sys.modules:
        own = _own_sha256()
        if own is not None:
            return own(data).hexdigest()
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _own_sha256() -> "Callable[[bytes], _Hash] | None":
    """The interpreter's built-in SHA-256 (`_sha2` from Python 3.12, `_sha256` before), if built."""
    global _own, _looked
    if not _looked:
        _looked = True
        for name in ("_sha2", "_sha256"):
            try:
                _own = getattr(__import__(name), "sha256")
                break
            except (ImportError, AttributeError):
                continue
    return _own
