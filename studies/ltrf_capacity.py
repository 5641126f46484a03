"""The LTRF paper's capacity study: rfmodel/studies/ltrf_capacity.py, also ``rfmodel study ltrf``.
``python studies/ltrf_capacity.py --help`` lists its options."""

import sys

from rfmodel.studies import launch

if __name__ == "__main__":
    sys.exit(launch("ltrf", "ltrf_capacity.py"))
