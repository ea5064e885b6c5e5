"""Tuning verbs: `tuning.apply`, `tuning.verify`, `tuning.revert`, `tuning.persist`.

Every path written is `relative_path()` of a validated key and device (the allowlist in
`model.tunables`), joined to the helper's root ("/" except in tests). Before the first write
of an apply the previous values go into a journal (JSON, fsync'd, renamed into place), so a
later helper, after a crash of this one or of the GUI, can write them back. A write refused
by the kernel rolls back the writes before it, in reverse order.

As tuned does for the ratio/bytes pairs: when the knob being set reads 0 its counterpart is in
force, so the counterpart's value is journaled and written back on revert (which zeroes the
knob again), so the mode that was in force comes back.

Modules: `sysfs` (the knobs under the root: read through `system.block_tunables`, written
here), `validation` (arguments and settings, checked before anything is written), `journal`,
`apply`, `revert` (also verify) and `persist` (the sysctl.d and udev rule files).
"""
