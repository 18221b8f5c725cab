"""hookgate.digest: the same SHA-256 as hashlib's whichever implementation answers, and no OpenSSL
loaded for the small data a cold hook process hashes."""

import hashlib
import subprocess
import sys

from hookgate.digest import LARGE, sha256_hex

SIZES = (0, 1, 63, 64, 65, 4096, LARGE - 1, LARGE, LARGE + 1)


def test_every_size_hashes_as_hashlib_does():
    for size in SIZES:
        data = bytes(i % 251 for i in range(size))
        assert sha256_hex(data) == hashlib.sha256(data).hexdigest(), size


def test_a_fresh_process_hashes_small_data_without_hashlib_and_large_data_with_it():
    script = (
        "import sys\nfrom hookgate.digest import LARGE, sha256_hex\n"
        "small = sha256_hex(b'session id')\nloaded = 'hashlib' in sys.modules or '_hashlib' in sys.modules\n"
        "large = sha256_hex(b'x' * LARGE)\n"
        "import hashlib\n"
        "print(small == hashlib.sha256(b'session id').hexdigest(), loaded,"
        " large == hashlib.sha256(b'x' * LARGE).hexdigest())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "False", "True"], done.stderr
