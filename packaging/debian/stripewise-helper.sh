#!/bin/sh
# Stripewise's privileged helper, as polkit's org.stripewise.helper action names it.
# -I: no PYTHON* variables, user site-packages or current directory decide what runs as root.
exec /opt/venvs/stripewise/bin/python3 -I -m stripewise.helper.installed "$@"
