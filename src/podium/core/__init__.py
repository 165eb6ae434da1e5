"""Core objects: the contest model, player state and numerics."""
