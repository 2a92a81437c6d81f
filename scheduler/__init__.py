"""APScheduler process that fires dream passes and reconcile sweeps."""
