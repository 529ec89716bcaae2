"""The Trainer's arithmetic: the setup, its fields and releases, the data loader, the run of updates, the schedules, the plan."""
