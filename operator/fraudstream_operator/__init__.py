"""fraudstream."""
