"""Input and output: YAML configs in and out (read safely), the command line, the Trainer's log block."""
