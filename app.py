"""Entry point, like connect-standalone.sh: python app.py worker.properties [connector files...]."""

import sys

from connect_lite.cli import main

if __name__ == "__main__":
    sys.exit(main())
