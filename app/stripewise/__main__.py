from __future__ import annotations

import sys

from stripewise.cli import main

sys.exit(main())
