"""Stripewise: a storage-tuning assistant for Linux."""

from __future__ import annotations

__version__ = "0.1.0"
APP_ID = "org.stripewise.Stripewise"
APP_NAME = "Stripewise"
