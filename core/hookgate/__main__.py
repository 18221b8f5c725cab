import sys

from hookgate.cli import main

sys.exit(main())
