"""Dream-pass steps and the orchestrator."""
