"""The registered hook command starts Python without `site` (core/bin/hookgate): it puts the
site-packages it was installed into on sys.path, which holds hookgate and, in the usual install,
msgspec. That is all a decision of hookgate's own gates needs; what may need more asks for the
sys.path a plain start has first: a project's Python policies, which may import anything
(hookgate.python_hooks.load), and a decision whose msgspec lives elsewhere (hookgate.cli.hook)."""

import sys


def complete_sys_path() -> None:
    """Run what a plain start would have run (venv, .pth files, user site), once."""
    if sys.flags.no_site and "site" not in sys.modules:
        import site

        site.main()
