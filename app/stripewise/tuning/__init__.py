"""Tuning outside the GUI: presets on disk, current values, filesystem geometry."""
