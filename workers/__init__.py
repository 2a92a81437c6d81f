"""dramatiq broker setup and actors: thin shells over memory_core."""
