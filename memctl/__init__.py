"""memctl: the operator's command line for Reverie."""
