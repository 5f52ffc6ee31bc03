"""``python -m connect_lite``: the same as the ``connect-lite`` command and ``python app.py``."""

import sys

from connect_lite.cli import main

if __name__ == "__main__":
    sys.exit(main())
