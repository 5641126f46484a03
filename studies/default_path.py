"""The analytic engine's default path against the simulator: rfmodel/studies/default_path.py, also
``rfmodel study default-path``.  ``python studies/default_path.py --help`` lists its options."""

import sys

from rfmodel.studies import launch

if __name__ == "__main__":
    sys.exit(launch("default-path", "default_path.py"))
