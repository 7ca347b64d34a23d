"""`python -m yota_src.cli ...` is the `yota-src` command."""

import sys

from yota_src.cli import main

if __name__ == "__main__":
    sys.exit(main())
