import sys

from steplab.io.cli import main

sys.exit(main())
