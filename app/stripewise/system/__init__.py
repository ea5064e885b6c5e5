"""Facts about the running Linux system that several packages read: host facts, mounts,
PCI names, block devices through udev and sysfs, block tunables.

It lies below the packages that read them (inventory, helper, history, tuning), so that they
need not import each other; it imports only `model` (no Qt, no SQL, nothing above it).
"""
