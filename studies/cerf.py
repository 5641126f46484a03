"""The Cache-Emulated Register File's study: rfmodel/studies/cerf.py, also ``rfmodel study cerf``.
``python studies/cerf.py --help`` lists its options."""

import sys

from rfmodel.studies import launch

if __name__ == "__main__":
    sys.exit(launch("cerf", "cerf.py"))
