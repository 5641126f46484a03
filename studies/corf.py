"""The CORF study ("CORF: Coalescing Operand Register File for GPUs"): rfmodel/studies/corf.py, also
``rfmodel study corf``.  ``python studies/corf.py --help`` lists its options."""

import sys

from rfmodel.studies import launch

if __name__ == "__main__":
    sys.exit(launch("corf", "corf.py"))
