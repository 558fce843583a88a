"""`python -m depyf`: the same as the `depyf` command."""

import sys

from .cli import main

sys.exit(main())
