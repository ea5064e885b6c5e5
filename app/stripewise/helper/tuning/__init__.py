"""Tuning verbs: `tuning.apply`, `tuning.verify`, `tuning.revert`, `tuning.persist`.

Every path written is `relative_path()` of a validated key and device (the allowlist in
`model.tunables`), joined to the helper's root ("/" except in tests). Before the first write
of an apply the previous values go into a journal (JSON, fsync'd, renamed into place), so a
later helper, after a crash of this one or of the GUI, can write them back. A write refused
by the kernel rolls back the writes before it, in reverse order.

As tuned does for the ratio/bytes pairs: when the knob being set reads 0 its counterpart is in
force, so the counterpart's value is journaled and written back on revert (which zeroes the
knob again), so the mode that was in force comes back.

Modules: `sysfs` (the knobs under the root: each kind's get / set / verify, tuned's contract,
for queue knobs, md's stripe cache and vm sysctls), `journal` (the journal's records as frozen
values, the one codec of its file, its lock), `apply` (with the checks every setting passes
before anything is written, and the put-back of an apply whose helper was killed), `revert`
(also verify), `writeback` (values written back) and `persist` (the sysctl.d and udev rules).
"""
