"""Input and output: YAML configs read safely and written back, and the Trainer's log block."""
