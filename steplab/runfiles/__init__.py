"""A finished run's own files read, reconciled with StepLab's plan, and explained (`explain.explain_entries`)."""
