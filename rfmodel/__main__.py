"""``python -m rfmodel``: the ``rfmodel`` command (:func:`rfmodel.cli.main`), for an environment whose scripts
folder is not on ``PATH``."""

import sys

from rfmodel.cli import main

if __name__ == "__main__":
    sys.exit(main())
