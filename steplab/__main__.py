import sys

from steplab.cli import main

sys.exit(main())
